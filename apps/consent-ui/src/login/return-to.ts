/** Where a member lands after signing in when no (acceptable) return_to was given. */
export const DEFAULT_RETURN_TO = '/account/connections';

const MAX_RETURN_TO_LENGTH = 8192;
const ORIGIN = 'https://consent-ui.invalid';

/**
 * Only a path on this origin, with nothing a browser could read as another host ("//evil",
 * "/\\evil"): the sign-in page is no open redirector (RFC 9700 §4.11, RFC 6819 §4.2.4).
 */
export function safeReturnTo(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_RETURN_TO_LENGTH) {
    return DEFAULT_RETURN_TO;
  }
  if (!value.startsWith('/') || value.startsWith('//') || value.includes('\\')) return DEFAULT_RETURN_TO;
  // Printable ASCII only: browsers strip tabs and newlines from URLs, which could turn "/\t/evil"
  // into "//evil" after this check; a legitimate path arrives percent-encoded anyway.
  if (!/^[\x21-\x7e]+$/.test(value)) return DEFAULT_RETURN_TO;
  try {
    return new URL(value, ORIGIN).origin === ORIGIN ? value : DEFAULT_RETURN_TO;
  } catch {
    return DEFAULT_RETURN_TO;
  }
}

/** The sign-in page that comes back to `returnTo` afterwards. */
export function loginLocation(returnTo: string): string {
  return `/login?return_to=${encodeURIComponent(returnTo)}`;
}
