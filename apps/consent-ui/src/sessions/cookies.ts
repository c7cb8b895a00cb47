/**
 * Just enough of RFC 6265 for this app's own cookies: their values are base64url or
 * percent-encoded, so parsing needs no quoting rules and serializing needs no escaping.
 */
export interface CookieOptions {
  readonly path: string;
  readonly httpOnly: boolean;
  readonly secure: boolean;
  /** `None` needs `secure` (a cookie sent in a partner's frame, whose forms carry CSRF tokens). */
  readonly sameSite: 'Lax' | 'Strict' | 'None';
  /** CHIPS: kept per top-level site, so a framed page's cookie survives third-party cookie blocking. */
  readonly partitioned?: boolean;
  /** Seconds; 0 deletes the cookie. Omitted: a browser-session cookie. */
  readonly maxAge?: number;
}

const COOKIE_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// cookie-octet of RFC 6265 §4.1.1: no CTLs, whitespace, DQUOTE, comma, semicolon or backslash.
const COOKIE_VALUE = /^[\x21\x23-\x2B\x2D-\x3A\x3C-\x5B\x5D-\x7E]*$/;

/** A repeated name keeps the first: browsers send the most specific path first (RFC 6265 §5.4). */
export function parseCookies(header: string | readonly string[] | undefined): ReadonlyMap<string, string> {
  const cookies = new Map<string, string>();
  const text = Array.isArray(header) ? header.join('; ') : (header as string | undefined);
  if (!text) return cookies;
  for (const part of text.split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    let value = part.slice(eq + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    if (name && !cookies.has(name)) cookies.set(name, value);
  }
  return cookies;
}

export function serializeCookie(name: string, value: string, options: CookieOptions): string {
  if (!COOKIE_NAME.test(name)) throw new Error(`invalid cookie name ${JSON.stringify(name)}`);
  if (!COOKIE_VALUE.test(value)) throw new Error(`invalid value for cookie ${name}`);
  const parts = [`${name}=${value}`, `Path=${options.path}`];
  if (options.maxAge !== undefined) {
    parts.push(`Max-Age=${Math.max(0, Math.floor(options.maxAge))}`);
    if (options.maxAge <= 0) parts.push('Expires=Thu, 01 Jan 1970 00:00:00 GMT');
  }
  if (options.httpOnly) parts.push('HttpOnly');
  if (options.sameSite === 'None' && !options.secure)
    throw new Error('a SameSite=None cookie must be Secure');
  if (options.secure) parts.push('Secure');
  parts.push(`SameSite=${options.sameSite}`);
  if (options.partitioned) parts.push('Partitioned');
  return parts.join('; ');
}
