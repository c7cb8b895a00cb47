import type { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiProblem, DependencyUnavailableError } from '@svc/platform';
import { UnconfiguredRateLimiter } from '../limits/rate-limit';
import {
  BearerAuthGuard,
  BearerStrategy,
  RequireScopes,
  ScopeGuard,
  type Principal,
} from './bearer-auth.guard';
import type { TokenAuthenticator } from './token-authenticator';

const PRINCIPAL: Principal = {
  user_id: 'usr_1',
  client_id: 'sandbox-partner',
  scopes: ['profile:read'],
  expires_at: '2099-01-01T00:00:00.000Z',
};
const GOOD = 'at_good-token';

interface FakeRequest {
  headers: Record<string, string>;
  query?: Record<string, string>;
  body?: Record<string, string>;
  user?: unknown;
}

function contextFor(request: FakeRequest, handler: () => void = () => undefined, cls: object = class {}) {
  return {
    switchToHttp: () => ({ getRequest: () => request, getResponse: () => ({}) }),
    getHandler: () => handler,
    getClass: () => cls,
  } as unknown as ExecutionContext;
}

/** The real strategy and guard, with a fake authenticator behind them. */
function guardWith(authenticate: (token: string) => Promise<Principal | undefined>) {
  const seen: string[] = [];
  const authenticator = {
    authenticate: (token: string) => {
      seen.push(token);
      return authenticate(token);
    },
  } as unknown as TokenAuthenticator;
  new BearerStrategy(authenticator, new UnconfiguredRateLimiter()); // registers itself with passport as `bearer`
  return { guard: new BearerAuthGuard(), seen };
}

/** AuthGuard's canActivate is declared as boolean | Promise | Observable; it is a Promise. */
function activate(guard: BearerAuthGuard, request: FakeRequest): Promise<boolean> {
  return guard.canActivate(contextFor(request)) as Promise<boolean>;
}

async function problemOf(promise: Promise<unknown>): Promise<ApiProblem> {
  const error = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(ApiProblem);
  return error as ApiProblem;
}

describe('BearerAuthGuard', () => {
  const valid = async (token: string) => (token === GOOD ? PRINCIPAL : undefined);

  it('lets a live token through and puts its principal on the request', async () => {
    const { guard } = guardWith(valid);
    const request: FakeRequest = { headers: { authorization: `Bearer ${GOOD}` } };
    await expect(activate(guard, request)).resolves.toBe(true);
    expect(request.user).toEqual(PRINCIPAL);
  });

  it('accepts the scheme name in any case (RFC 9110 §11.1)', async () => {
    const { guard } = guardWith(valid);
    await expect(activate(guard, { headers: { authorization: `bearer ${GOOD}` } })).resolves.toBe(true);
  });

  it('answers no credentials with 401 and a challenge without an error code (RFC 6750 §3.1)', async () => {
    const { guard, seen } = guardWith(valid);
    const problem = await problemOf(activate(guard, { headers: {} }));
    expect(problem.code).toBe('invalid_token');
    expect(problem.status).toBe(401);
    expect(problem.extras.headers).toEqual({ 'www-authenticate': 'Bearer' });
    expect(seen).toEqual([]);
  });

  it.each([
    ['an unknown token', 'Bearer at_unknown'],
    ['a bearer header without a token', 'Bearer'],
    ['a bearer header with two tokens', 'Bearer at_a at_b'],
    ['a token outside the b64token syntax', 'Bearer at_"quoted"'],
  ])('answers %s with 401 error="invalid_token" (RFC 6750 §3.1)', async (_case, authorization) => {
    const { guard } = guardWith(valid);
    const problem = await problemOf(activate(guard, { headers: { authorization } }));
    expect(problem.code).toBe('invalid_token');
    expect(problem.extras.headers).toEqual({ 'www-authenticate': 'Bearer error="invalid_token"' });
  });

  it('treats another authentication scheme as no bearer credentials (RFC 6750 §3.1)', async () => {
    const { guard, seen } = guardWith(valid);
    const problem = await problemOf(
      activate(guard, { headers: { authorization: 'Basic c2FuZGJveDpzZWNyZXQ=' } }),
    );
    expect(problem.extras.headers).toEqual({ 'www-authenticate': 'Bearer' });
    expect(seen).toEqual([]);
  });

  it.each([
    ['query', { query: { access_token: GOOD } }],
    ['form body', { body: { access_token: GOOD } }],
  ])('never accepts a token in the %s (RFC 6750 §2.2/§2.3 are not offered)', async (_where, extra) => {
    const { guard, seen } = guardWith(valid);
    const request: FakeRequest = { headers: {}, ...extra };
    const problem = await problemOf(activate(guard, request));
    expect(problem.extras.headers).toEqual({ 'www-authenticate': 'Bearer' });
    expect(problem.detail).toMatch(/only in the Authorization header/);
    expect(seen).toEqual([]);
    expect(request.user).toBeUndefined();
  });

  it('uses the header token and ignores an access_token parameter sent alongside it', async () => {
    const { guard, seen } = guardWith(valid);
    const request: FakeRequest = {
      headers: { authorization: `Bearer ${GOOD}` },
      query: { access_token: 'x' },
    };
    await expect(activate(guard, request)).resolves.toBe(true);
    expect(seen).toEqual([GOOD]);
  });

  it('lets an unavailable auth-server through as DependencyUnavailableError (503, fail closed)', async () => {
    const { guard } = guardWith(() => Promise.reject(new DependencyUnavailableError('auth-server')));
    await expect(activate(guard, { headers: { authorization: `Bearer ${GOOD}` } })).rejects.toBeInstanceOf(
      DependencyUnavailableError,
    );
  });
});

describe('ScopeGuard', () => {
  const guard = new ScopeGuard(new Reflector());
  const withPrincipal = (scopes: string[]): FakeRequest => ({ headers: {}, user: { ...PRINCIPAL, scopes } });

  class NoScopes {
    handler() {}
  }
  class Scoped {
    @RequireScopes('seatime:read')
    one() {}
    @RequireScopes('profile:read', 'vessels:read')
    two() {}
  }
  @RequireScopes('vessels:read')
  class ScopedController {
    inherited() {}
    @RequireScopes('profile:read')
    overridden() {}
  }

  it('lets any live token through when no scope is required', () => {
    expect(guard.canActivate(contextFor(withPrincipal([]), NoScopes.prototype.handler, NoScopes))).toBe(true);
  });

  it('lets a token with every required scope through', () => {
    const request = withPrincipal(['profile:read', 'vessels:read', 'seatime:read']);
    expect(guard.canActivate(contextFor(request, Scoped.prototype.two, Scoped))).toBe(true);
  });

  it('answers a missing scope with 403 insufficient_scope and the needed scope in the challenge', () => {
    const request = withPrincipal(['profile:read']);
    expect(() => guard.canActivate(contextFor(request, Scoped.prototype.one, Scoped))).toThrow(
      expect.objectContaining({
        code: 'insufficient_scope',
        status: 403,
        extras: {
          headers: { 'www-authenticate': 'Bearer error="insufficient_scope", scope="seatime:read"' },
        },
      }) as Error,
    );
  });

  it('names every needed scope, space-separated, when one of several is missing', () => {
    const request = withPrincipal(['profile:read']);
    expect(() => guard.canActivate(contextFor(request, Scoped.prototype.two, Scoped))).toThrow(
      expect.objectContaining({
        extras: {
          headers: {
            'www-authenticate': 'Bearer error="insufficient_scope", scope="profile:read vessels:read"',
          },
        },
      }) as Error,
    );
  });

  it('takes a controller’s scopes, and a handler’s list replaces them', () => {
    const onlyProfile = withPrincipal(['profile:read']);
    expect(() =>
      guard.canActivate(contextFor(onlyProfile, ScopedController.prototype.inherited, ScopedController)),
    ).toThrow(ApiProblem);
    expect(
      guard.canActivate(contextFor(onlyProfile, ScopedController.prototype.overridden, ScopedController)),
    ).toBe(true);
  });

  it('refuses to run without a principal (a wiring mistake is never a pass)', () => {
    expect(() =>
      guard.canActivate(contextFor({ headers: {} }, NoScopes.prototype.handler, NoScopes)),
    ).toThrow(/after BearerAuthGuard/);
  });
});
