import { AUTH_AUTHORIZE_DECIDE, AUTH_AUTHORIZE_VALIDATE } from '@svc/contracts';
import { SessionsService } from '../sessions/sessions.service';
import {
  cookieHeader,
  FakeClock,
  FakeRpcClient,
  FakeSessionsRepository,
} from '../../../../test/support/fake-consent-ui';
import { AuthorizeException } from './authorize.exception';
import { AuthorizeService } from './authorize.service';

async function setup() {
  const rpc = new FakeRpcClient();
  const sessions = new SessionsService(
    new FakeSessionsRepository().asRepository(),
    { secure: true },
    new FakeClock().read,
  );
  const { session, cookies } = await sessions.start('usr_1', undefined);
  return {
    rpc,
    service: new AuthorizeService(rpc.asRpcClient(), sessions),
    cookie: cookieHeader(cookies),
    csrf: session.csrfToken,
  };
}

describe('AuthorizeService', () => {
  it('asks nothing of auth-server before the member has signed in', async () => {
    const { rpc, service } = await setup();
    await expect(service.show(undefined, '/oauth/authorize?client_id=x')).resolves.toEqual({
      outcome: 'sign_in',
      location: '/login?return_to=%2Foauth%2Fauthorize%3Fclient_id%3Dx',
    });
    expect(rpc.calls).toEqual([]);
  });

  it('shows the consent screen every time, even for a partner allowed before (RFC 6749 §10.2)', async () => {
    const { rpc, service, cookie } = await setup();
    rpc.on(AUTH_AUTHORIZE_VALIDATE, ({ params }) => ({
      outcome: 'consent' as const,
      client_name: 'P',
      scopes: [],
      params,
    }));
    for (let i = 0; i < 2; i += 1) {
      await expect(service.show(cookie, '/oauth/authorize?client_id=x')).resolves.toMatchObject({
        outcome: 'consent',
      });
    }
    expect(rpc.callsOf(AUTH_AUTHORIZE_VALIDATE)).toHaveLength(2);
  });

  it('checks the CSRF token before the decision itself', async () => {
    const { rpc, service, cookie } = await setup();
    await expect(
      service.decide(cookie, { params: {}, csrf: undefined, decision: 'nonsense' }),
    ).rejects.toMatchObject({
      code: 'csrf_mismatch',
    });
    expect(rpc.calls).toEqual([]);
  });

  it('refuses a decision that is neither allow nor deny', async () => {
    const { service, cookie, csrf } = await setup();
    await expect(service.decide(cookie, { params: {}, csrf, decision: ['allow', 'deny'] })).rejects.toEqual(
      new AuthorizeException('invalid_decision'),
    );
  });

  it('treats a "consent" answer to a decision as a fault, never as a reason to redirect', async () => {
    const { rpc, service, cookie, csrf } = await setup();
    rpc.on(AUTH_AUTHORIZE_DECIDE, ({ params }) => ({
      outcome: 'consent' as const,
      client_name: 'P',
      scopes: [],
      params,
    }));
    await expect(
      service.decide(cookie, { params: { client_id: 'x' }, csrf, decision: 'allow' }),
    ).rejects.toThrow(/answered "consent"/);
  });
});
