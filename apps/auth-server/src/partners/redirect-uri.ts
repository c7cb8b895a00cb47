/**
 * Registered redirect URIs must be HTTPS, except loopback for development (RFC 8252 §7.3,
 * docs/rules.md: `http://localhost*`). No fragment (RFC 6749 §3.1.2).
 */
export function isAcceptableRedirectUri(value: string): boolean {
  let uri: URL;
  try {
    uri = new URL(value);
  } catch {
    return false;
  }
  if (uri.hash !== '' || value.includes('#')) return false;
  if (uri.protocol === 'https:') return true;
  return uri.protocol === 'http:' && (uri.hostname === 'localhost' || uri.hostname === '127.0.0.1');
}
