import type { AuthorizeValidateRequest } from '@svc/contracts';

/**
 * The first value of each query parameter, and the names that repeat (RFC 6749 §3.1 forbids
 * them), read from the raw query: Fastify's parser would fold repeats into arrays.
 */
export function parseAuthorizeQuery(url: string): AuthorizeValidateRequest {
  const q = url.indexOf('?');
  const search = new URLSearchParams(q >= 0 ? url.slice(q + 1) : '');
  // A null prototype: a parameter named "__proto__" is data like any other.
  const params = Object.create(null) as Record<string, string>;
  const repeated = new Set<string>();
  for (const [name, value] of search) {
    if (Object.hasOwn(params, name)) repeated.add(name);
    else params[name] = value;
  }
  return { params, repeated: [...repeated] };
}

/** So no OAuth parameter posted back can collide with the form's own fields (`csrf`, `decision`). */
export const PARAM_FIELD_PREFIX = 'param.';

export interface DecisionForm {
  readonly params: Readonly<Record<string, string>>;
  readonly csrf: unknown;
  readonly decision: unknown;
}

export function parseDecisionForm(body: unknown): DecisionForm {
  const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const params = Object.create(null) as Record<string, string>;
  for (const [name, value] of Object.entries(fields)) {
    if (name.startsWith(PARAM_FIELD_PREFIX) && typeof value === 'string') {
      params[name.slice(PARAM_FIELD_PREFIX.length)] = value;
    }
  }
  return { params, csrf: fields.csrf, decision: fields.decision };
}
