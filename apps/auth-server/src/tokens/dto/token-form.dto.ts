import type { FastifyRequest } from 'fastify';
import { OAuthException } from '../../oauth/oauth.exception';
import type { ClientCredentials } from '../../partners/partners.service';

/** A form-encoded request body of the token or revocation endpoint, one value per name. */
export type OAuthForm = Readonly<Record<string, string>>;

/**
 * RFC 6749 §3.2 and RFC 7009 §2.1: the body is `application/x-www-form-urlencoded`, and no
 * parameter may repeat (§3.1).
 */
export function readOAuthForm(request: FastifyRequest): OAuthForm {
  const type = String(request.headers['content-type'] ?? '')
    .split(';')[0]
    .trim()
    .toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') {
    throw new OAuthException('invalid_request', 'The body must be application/x-www-form-urlencoded.');
  }
  const body = (request.body ?? {}) as Record<string, string | string[]>;
  const form: Record<string, string> = {};
  for (const [name, value] of Object.entries(body)) {
    if (Array.isArray(value))
      throw new OAuthException('invalid_request', `Parameter ${name} must not repeat.`);
    form[name] = value;
  }
  return form;
}

export function required(form: OAuthForm, name: string): string {
  const value = form[name];
  if (value === undefined || value === '')
    throw new OAuthException('invalid_request', `Parameter ${name} is missing.`);
  return value;
}

/** HTTP Basic with form-urlencoded id and secret (RFC 6749 §2.3.1). */
function decodeBasic(header: string): { id: string; secret: string } | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  const decoded = match ? Buffer.from(match[1], 'base64').toString('utf8') : '';
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  const unescape = (v: string) => decodeURIComponent(v.replace(/\+/g, ' '));
  try {
    return { id: unescape(decoded.slice(0, colon)), secret: unescape(decoded.slice(colon + 1)) };
  } catch {
    return undefined;
  }
}

/** Whether the client chose HTTP Basic; "Basic" with nothing after it is still an attempt at it. */
export function presentsBasic(authorization: string | undefined): authorization is string {
  return authorization !== undefined && /^Basic(\s|$)/i.test(authorization.trim());
}

/**
 * client_secret_basic or client_secret_post; using both at once is refused (RFC 6749 §2.3: a
 * client must not use more than one method in a request).
 */
export function readClientCredentials(authorization: string | undefined, form: OAuthForm): ClientCredentials {
  if (presentsBasic(authorization)) {
    const basic = decodeBasic(authorization);
    if (!basic) throw new OAuthException('invalid_client', 'The Basic credentials are malformed.');
    if (form.client_secret !== undefined) {
      throw new OAuthException(
        'invalid_request',
        'Use one client authentication method, not Basic and client_secret.',
      );
    }
    if (form.client_id !== undefined && form.client_id !== basic.id) {
      throw new OAuthException('invalid_request', 'client_id differs from the authenticated client.');
    }
    return { clientId: basic.id, clientSecret: basic.secret };
  }
  if (!form.client_id || form.client_secret === undefined) {
    throw new OAuthException(
      'invalid_client',
      'Client authentication is required (client_id and client_secret).',
    );
  }
  return { clientId: form.client_id, clientSecret: form.client_secret };
}
