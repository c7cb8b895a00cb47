import type { ExecutionContext } from '@nestjs/common';
import { ApiProblem } from '@svc/platform';
import { BasicAuthGuard, BasicStrategy, isWellFormedBasic } from './basic-auth.guard';
import type { PartnerPrincipal } from './partner.guard';
import { PartnerVerifier } from './partner-verifier';

const b64 = (text: string) => Buffer.from(text).toString('base64');

describe('isWellFormedBasic', () => {
  it('accepts one client_id:client_secret pair, any case of the scheme', () => {
    expect(isWellFormedBasic(`Basic ${b64('sandbox-partner:sandbox-secret')}`)).toBe(true);
    expect(isWellFormedBasic(`basic ${b64('a:b')}`)).toBe(true);
  });

  it.each([
    ['a secret with a second colon (passport-http would cut it)', `Basic ${b64('a:secret:more')}`],
    ['no colon', `Basic ${b64('just-a-name')}`],
    ['another scheme that contains "basic"', `NotBasic ${b64('a:b')}`],
    ['a bearer token', 'Bearer abc'],
    ['no credentials', 'Basic '],
    ['junk after the credentials', `Basic ${b64('a:b')} extra`],
  ])('refuses %s', (_what, header) => {
    expect(isWellFormedBasic(header)).toBe(false);
  });
});

describe('BasicAuthGuard with the real passport-http strategy', () => {
  const PARTNER = { client_id: 'sandbox-partner', sponsorship: true } as unknown as PartnerPrincipal;
  const asked: string[] = [];
  class FakeVerifier extends PartnerVerifier {
    verify(clientId: string, secret: string): Promise<PartnerPrincipal | undefined> {
      asked.push(`${clientId}:${secret}`);
      return Promise.resolve(
        clientId === 'sandbox-partner' && secret === 'sandbox-secret' ? PARTNER : undefined,
      );
    }
  }
  new BasicStrategy(new FakeVerifier()); // registers itself with passport as `basic`
  const guard = new BasicAuthGuard();
  const activate = (request: { headers: Record<string, string>; user?: unknown }) =>
    guard.canActivate({
      switchToHttp: () => ({ getRequest: () => request, getResponse: () => ({}) }),
    } as unknown as ExecutionContext) as Promise<boolean>;

  beforeEach(() => asked.splice(0));

  it('puts the partner of valid credentials on the request', async () => {
    const request = { headers: { authorization: `Basic ${b64('sandbox-partner:sandbox-secret')}` } };
    await expect(activate(request)).resolves.toBe(true);
    expect(request).toHaveProperty('user', PARTNER);
  });

  it.each([
    ['no credentials', undefined, []],
    ['wrong credentials', `Basic ${b64('sandbox-partner:wrong')}`, ['sandbox-partner:wrong']],
    ['a secret with a second colon', `Basic ${b64('sandbox-partner:sandbox-secret:more')}`, []],
    ['another scheme that contains "basic"', `NotBasic ${b64('sandbox-partner:sandbox-secret')}`, []],
  ])('answers %s with 401 invalid_token and the Basic challenge', async (_what, authorization, verified) => {
    const error = await activate({ headers: authorization === undefined ? {} : { authorization } }).catch(
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(ApiProblem);
    expect(error).toMatchObject({
      code: 'invalid_token',
      status: 401,
      extras: { headers: { 'www-authenticate': 'Basic realm="partners"' } },
    });
    expect(asked).toEqual(verified);
  });
});
