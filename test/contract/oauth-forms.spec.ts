import type { JsonObject } from '@svc/contracts';
import { AppMetrics } from '@svc/platform';
import type { FailedAuthLimiter } from '@svc/security';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { OAuthException } from '../../apps/auth-server/src/oauth/oauth.exception';
import type { PartnersService } from '../../apps/auth-server/src/partners/partners.service';
import { TokenController } from '../../apps/auth-server/src/tokens/token.controller';
import { TokenMetrics } from '../../apps/auth-server/src/tokens/token-metrics';
import type { TokensService } from '../../apps/auth-server/src/tokens/tokens.service';
import { DOCUMENT, resolve } from '../support/contract';

/**
 * The OAuth forms, both ways: the API description's form schemas of `/oauth/token` (one per
 * grant) and `/oauth/revoke` against what the token endpoint reads. Each parameter the
 * description requires is refused with `invalid_request` when missing, each optional one may be
 * left out, and every parameter it lists reaches client authentication or the grant — none is
 * read that it does not list (a parameter the controller read but the form lacked would arrive
 * as undefined).
 */
interface FormVariant {
  readonly name: string;
  readonly required: readonly string[];
  readonly properties: Readonly<Record<string, JsonObject>>;
}

function formVariants(path: string): FormVariant[] {
  const operation = (DOCUMENT.paths as Record<string, Record<string, JsonObject>>)[path].post;
  const body = (operation.requestBody as JsonObject).content as Record<string, JsonObject>;
  const schema = resolve(body['application/x-www-form-urlencoded'].schema as JsonObject);
  const variants = (schema.oneOf as JsonObject[] | undefined) ?? [schema];
  return variants.map((v) => ({
    name: String(v.title ?? path),
    required: v.required as string[],
    properties: v.properties as Record<string, JsonObject>,
  }));
}

/** RFC 7009 §2.1: the hint only helps a server find the token; this one finds it without. */
const IGNORED = new Set(['token_type_hint']);
const CLIENT = ['client_id', 'client_secret'];

/** A distinct value per parameter, so where each one went can be told apart. */
function fullForm(variant: FormVariant): Record<string, string> {
  const form: Record<string, string> = {};
  for (const [name, schema] of Object.entries(variant.properties))
    form[name] = typeof schema.const === 'string' ? schema.const : `value-of-${name}`;
  if (variant.properties.token_type_hint) form.token_type_hint = 'refresh_token';
  return form;
}

/** The controller with the services behind it recording what they were given. */
function endpoint() {
  const received: unknown[] = [];
  const authenticate = (credentials: unknown) => (
    received.push(credentials),
    Promise.resolve({ clientId: 'p' })
  );
  // The grants start from the remembered client (their statements check the partner row again).
  const partners = { authenticate, authenticateRemembered: authenticate } as unknown as PartnersService;
  const record = (...args: unknown[]) => (received.push(...args.slice(1)), Promise.resolve(undefined));
  const tokens = { exchangeCode: record, refresh: record, revoke: record } as unknown as TokensService;
  const failures = {
    limit: (_k: string, _r: unknown, run: () => unknown) => run(),
  } as unknown as FailedAuthLimiter;
  const controller = new TokenController(
    partners,
    tokens,
    failures,
    new TokenMetrics(new AppMetrics('auth-server')),
  );
  const reply = { elapsedTime: 0, header: () => reply } as unknown as FastifyReply;
  const call = (path: string, form: Record<string, string>) => {
    const request = {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form,
    } as unknown as FastifyRequest;
    return path === '/oauth/token' ? controller.token(request, reply) : controller.revoke(request, reply);
  };
  return { received, call };
}

/** Every string the services were handed, however nested. */
function strings(values: readonly unknown[]): string[] {
  return values.flatMap((v) =>
    typeof v === 'string' ? [v] : typeof v === 'object' && v !== null ? strings(Object.values(v)) : [],
  );
}

const CASES = ['/oauth/token', '/oauth/revoke'].flatMap((path) =>
  formVariants(path).map((variant) => ({ path, variant })),
);

describe('OAuth forms of the API description, both ways', () => {
  it('reads both grants of the token form and the revocation form (this spec is not vacuous)', () => {
    expect(CASES.map((c) => c.variant.name)).toEqual([
      'authorization_code',
      'refresh_token',
      '/oauth/revoke',
    ]);
  });

  describe.each(CASES)('$path $variant.name', ({ path, variant }) => {
    it('hands every listed parameter to client authentication or the grant, and reads no other', async () => {
      const { received, call } = endpoint();
      const form = fullForm(variant);
      await call(path, form);
      const passed = strings(received);
      const listed = Object.entries(form)
        .filter(([name]) => name !== 'grant_type' && !IGNORED.has(name))
        .map(([, value]) => value);
      expect(passed.sort()).toEqual(listed.sort());
      for (const value of received)
        if (typeof value === 'object' && value !== null)
          expect(Object.values(value).filter((v) => v === undefined)).toEqual([]);
    });

    it('refuses each parameter the description requires when it is missing', async () => {
      expect(variant.required.length).toBeGreaterThan(0);
      for (const name of variant.required) {
        const form = fullForm(variant);
        delete form[name];
        const { call } = endpoint();
        await expect(call(path, form)).rejects.toEqual(
          new OAuthException('invalid_request', `Parameter ${name} is missing.`),
        );
      }
    });

    it('accepts each parameter the description leaves optional being left out', async () => {
      const optional = Object.keys(variant.properties).filter(
        (name) => !variant.required.includes(name) && !CLIENT.includes(name),
      );
      for (const name of optional) {
        const form = fullForm(variant);
        delete form[name];
        const { call } = endpoint();
        await expect(call(path, form)).resolves.toBeUndefined();
      }
    });

    it('lists the client credentials as optional, since HTTP Basic may carry them instead', async () => {
      for (const name of CLIENT) {
        expect(Object.keys(variant.properties)).toContain(name);
        expect(variant.required).not.toContain(name);
        const form = fullForm(variant);
        delete form[name];
        const { call } = endpoint();
        await expect(call(path, form)).rejects.toMatchObject({ code: 'invalid_client' });
      }
    });
  });
});
