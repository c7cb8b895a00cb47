import type { AuthorizeOutcome } from '@svc/contracts';
import type { TransactionRunner } from '@svc/platform';
import type { ConsentsRepository } from '../consents/consents.repository';
import type { PartnerEntity } from '../partners/partner.entity';
import type { PartnersService } from '../partners/partners.service';
import type { AuthorizationCodesRepository } from './authorization-codes.repository';
import { AuthorizeService } from './authorize.service';

const partner = {
  clientId: 'acme',
  name: 'Acme Crewing',
  redirectUris: ['https://acme.example/cb', 'http://localhost:8765/callback'],
  allowedScopes: ['profile:read', 'seatime:read'],
  suspended: false,
} as PartnerEntity;

function setup(overrides: Partial<PartnerEntity> = {}) {
  const codes: unknown[] = [];
  const grants: unknown[] = [];
  const partners = { findById: async (id: string) => (id === 'acme' ? { ...partner, ...overrides } : null) };
  const consents = { grant: async (_tx: unknown, ...args: unknown[]) => void grants.push(args) };
  const codeRepo = { insert: async (_tx: unknown, code: unknown) => void codes.push(code) };
  const transactions = { run: async (work: (tx: unknown) => Promise<unknown>) => work({}) };
  const service = new AuthorizeService(
    partners as unknown as PartnersService,
    consents as unknown as ConsentsRepository,
    codeRepo as unknown as AuthorizationCodesRepository,
    transactions as unknown as TransactionRunner,
    { PUBLIC_BASE_URL: 'https://crew.example/', AUTH_CODE_TTL_SECONDS: 60 } as never,
  );
  return { service, codes, grants };
}

const valid = {
  response_type: 'code',
  client_id: 'acme',
  redirect_uri: 'https://acme.example/cb',
  scope: 'profile:read',
  state: 's-1',
  code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
  code_challenge_method: 'S256',
};

function redirectParams(outcome: AuthorizeOutcome): URLSearchParams {
  if (outcome.outcome !== 'redirect') throw new Error(`expected a redirect, got ${outcome.outcome}`);
  return new URL(outcome.redirect_to).searchParams;
}

describe('AuthorizeService.validate (RFC 6749 §4.1.2.1)', () => {
  it('asks for consent with each scope in plain words', async () => {
    const outcome = await setup().service.validate(valid, []);
    expect(outcome).toMatchObject({ outcome: 'consent', client_name: 'Acme Crewing' });
    if (outcome.outcome !== 'consent') throw new Error('no consent');
    expect(outcome.scopes).toEqual([{ scope: 'profile:read', description: expect.stringContaining('name') }]);
    expect(outcome.params).toEqual(valid);
  });

  it.each([
    ['an unknown client', { client_id: 'nobody' }],
    ['a missing client_id', { client_id: '' }],
    ['a redirect_uri with an extra trailing slash', { redirect_uri: 'https://acme.example/cb/' }],
    ['an unregistered redirect_uri', { redirect_uri: 'https://evil.example/cb' }],
    ['a missing redirect_uri', { redirect_uri: '' }],
  ])('shows an error page, never a redirect, for %s', async (_name, change) => {
    const outcome = await setup().service.validate({ ...valid, ...change }, []);
    expect(outcome.outcome).toBe('error_page');
  });

  it('shows an error page for a repeated client_id', async () => {
    expect((await setup().service.validate(valid, ['client_id'])).outcome).toBe('error_page');
  });

  it.each([
    ['response_type=token', { response_type: 'token' }, 'unsupported_response_type'],
    ['no response_type', { response_type: '' }, 'invalid_request'],
    ['no state', { state: '' }, 'invalid_request'],
    ['no code_challenge', { code_challenge: '' }, 'invalid_request'],
    ['code_challenge_method=plain (RFC 7636 §4.4.1)', { code_challenge_method: 'plain' }, 'invalid_request'],
    ['no code_challenge_method', { code_challenge_method: '' }, 'invalid_request'],
    ['a malformed challenge', { code_challenge: 'short' }, 'invalid_request'],
    ['a scope outside the partner’s set', { scope: 'profile:read vessels:read' }, 'invalid_scope'],
    ['an unknown scope', { scope: 'admin' }, 'invalid_scope'],
    ['no scope', { scope: '' }, 'invalid_request'],
  ])('redirects %s back with the error, the state and iss (RFC 9207)', async (_name, change, error) => {
    const params = redirectParams(await setup().service.validate({ ...valid, ...change }, []));
    expect(params.get('error')).toBe(error);
    expect(params.get('error_description')).toBeTruthy();
    expect(params.get('iss')).toBe('https://crew.example');
    if (!('state' in change)) expect(params.get('state')).toBe('s-1');
  });

  it('never reflects a state longer than 1024 characters: an error page instead of a redirect', async () => {
    expect((await setup().service.validate({ ...valid, state: 'x'.repeat(1025) }, [])).outcome).toBe(
      'error_page',
    );
    expect((await setup().service.validate({ ...valid, state: 'x'.repeat(1024) }, [])).outcome).toBe(
      'consent',
    );
    expect(
      (await setup().service.validate({ ...valid, state: 'x'.repeat(2000), scope: 'admin' }, [])).outcome,
    ).toBe('error_page');
  });

  it('does not quote the request in error descriptions (RFC 6749 §4.1.2.1 character set)', async () => {
    const params = redirectParams(
      await setup().service.validate({ ...valid, scope: 'profile:read "weird\\ é' }, []),
    );
    expect(params.get('error')).toBe('invalid_scope');
    expect(params.get('error_description')).toMatch(/^[\x20-\x21\x23-\x5B\x5D-\x7E]+$/);
  });

  it('refuses repeated parameters (RFC 6749 §3.1)', async () => {
    expect(redirectParams(await setup().service.validate(valid, ['scope'])).get('error')).toBe(
      'invalid_request',
    );
  });

  it('denies a suspended partner', async () => {
    expect(redirectParams(await setup({ suspended: true }).service.validate(valid, [])).get('error')).toBe(
      'access_denied',
    );
  });
});

describe('AuthorizeService.decide', () => {
  it('issues a code bound to the request on Allow, keeping the redirect URI’s own query', async () => {
    const { service, codes, grants } = setup({ redirectUris: ['https://acme.example/cb?tenant=7'] });
    const params = redirectParams(
      await service.decide('usr_1', { ...valid, redirect_uri: 'https://acme.example/cb?tenant=7' }, 'allow'),
    );
    expect(params.get('tenant')).toBe('7');
    expect(params.get('code')).toMatch(/^ac_[A-Za-z0-9_-]{43}$/);
    expect(params.get('state')).toBe('s-1');
    expect(params.get('iss')).toBe('https://crew.example');
    expect(grants).toEqual([['usr_1', 'acme', ['profile:read']]]);
    expect(codes).toEqual([
      expect.objectContaining({
        clientId: 'acme',
        userId: 'usr_1',
        redirectUri: 'https://acme.example/cb?tenant=7',
        codeChallenge: valid.code_challenge,
        codeDigest: expect.stringMatching(/^[0-9a-f]{64}$/),
      }),
    ]);
    expect(JSON.stringify(codes)).not.toContain(params.get('code'));
  });

  it('answers Deny with access_denied and the state, and records nothing', async () => {
    const { service, codes, grants } = setup();
    const params = redirectParams(await service.decide('usr_1', valid, 'deny'));
    expect(params.get('error')).toBe('access_denied');
    expect(params.get('state')).toBe('s-1');
    expect(codes).toHaveLength(0);
    expect(grants).toHaveLength(0);
  });

  it('validates the posted parameters again', async () => {
    expect(
      (await setup().service.decide('usr_1', { ...valid, redirect_uri: 'https://evil.example/cb' }, 'allow'))
        .outcome,
    ).toBe('error_page');
  });
});
