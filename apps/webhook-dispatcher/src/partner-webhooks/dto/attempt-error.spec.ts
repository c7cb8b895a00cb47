import { attemptErrorKind } from './attempt-error';

describe('attemptErrorKind', () => {
  it.each([
    ['timeout', 'timeout'],
    ['connection_refused (ECONNREFUSED)', 'connection_refused'],
    ['tls (DEPTH_ZERO_SELF_SIGNED_CERT)', 'tls'],
    ['dns (ENOTFOUND)', 'dns'],
    ['other (EHOSTUNREACH)', 'other'],
    ['connection_reset', 'connection_reset'],
    ['target refused: 10.0.0.5 is a private address', 'blocked_address'],
    ['connect ECONNREFUSED 127.0.0.1:9', 'connection_refused'],
    ['socket hang up', 'connection_reset'],
    ['read ECONNRESET', 'connection_reset'],
    ['getaddrinfo ENOTFOUND partner.invalid', 'dns'],
    ['unable to verify the first certificate', 'tls'],
    ['self-signed certificate', 'tls'],
    ['partner no longer receives webhooks', 'not_a_recipient'],
    ['something else entirely', 'other'],
  ])('names %j as %s', (error, kind) => {
    expect(attemptErrorKind(null, error)).toBe(kind);
  });

  it('is null when the endpoint answered (the status says what happened) or nothing failed', () => {
    expect(attemptErrorKind(500, 'HTTP 500')).toBeNull();
    expect(attemptErrorKind(204, null)).toBeNull();
    expect(attemptErrorKind(null, null)).toBeNull();
  });
});
