import { DEFAULT_RETURN_TO, loginLocation, safeReturnTo } from './return-to';

describe('safeReturnTo (no open redirect, RFC 9700 §4.11)', () => {
  it.each([
    ['/account/connections'],
    ['/oauth/authorize?response_type=code&client_id=sandbox-partner&state=a%2Fb'],
    ['/account/connections#top'],
    ['/'],
  ])('accepts the relative path %s', (path) => {
    expect(safeReturnTo(path)).toBe(path);
  });

  it.each([
    ['https://evil.example/'],
    ['http:/evil.example'],
    ['//evil.example/path'],
    ['/\\evil.example'],
    ['/%5Cok-but-then\\evil'],
    ['\\\\evil.example'],
    ['javascript:alert(1)'],
    ['account/connections'],
    ['/\t/evil.example'],
    ['/\n/evil.example'],
    [' /account'],
    ['/account connections'],
    [''],
    [`/${'a'.repeat(9000)}`],
  ])('rejects %j', (value) => {
    expect(safeReturnTo(value)).toBe(DEFAULT_RETURN_TO);
  });

  it('rejects what is not a string', () => {
    expect(safeReturnTo(undefined)).toBe(DEFAULT_RETURN_TO);
    expect(safeReturnTo(['/a', '/b'])).toBe(DEFAULT_RETURN_TO);
  });

  it('builds the sign-in location with the return path URL-encoded', () => {
    expect(loginLocation('/oauth/authorize?client_id=a&state=x y')).toBe(
      '/login?return_to=%2Foauth%2Fauthorize%3Fclient_id%3Da%26state%3Dx%20y',
    );
  });
});
