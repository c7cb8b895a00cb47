import { parseCookies, serializeCookie } from './cookies';

describe('parseCookies', () => {
  it('reads name=value pairs and ignores malformed parts', () => {
    const cookies = parseCookies('a=1; svc_session=abc_DEF-123;broken; =nameless;  b = 2 ');
    expect(Object.fromEntries(cookies)).toEqual({ a: '1', svc_session: 'abc_DEF-123', b: '2' });
  });

  it('keeps the first of repeated names (the most specific path comes first, RFC 6265 §5.4)', () => {
    expect(parseCookies('x=first; x=second').get('x')).toBe('first');
  });

  it('strips quotes and copes with no header', () => {
    expect(parseCookies('q="v"').get('q')).toBe('v');
    expect(parseCookies(undefined).size).toBe(0);
    expect(parseCookies(['a=1', 'b=2']).get('b')).toBe('2');
  });
});

describe('serializeCookie', () => {
  it('writes every attribute', () => {
    expect(
      serializeCookie('svc_session', 'abc', {
        path: '/',
        httpOnly: true,
        secure: true,
        sameSite: 'Lax',
        maxAge: 43200,
      }),
    ).toBe('svc_session=abc; Path=/; Max-Age=43200; HttpOnly; Secure; SameSite=Lax');
  });

  it('omits Secure when told to, and expires a cleared cookie', () => {
    expect(
      serializeCookie('svc_session', '', {
        path: '/',
        httpOnly: true,
        secure: false,
        sameSite: 'Lax',
        maxAge: 0,
      }),
    ).toBe('svc_session=; Path=/; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Lax');
  });

  it('refuses values that would inject attributes', () => {
    const options = { path: '/', httpOnly: true, secure: true, sameSite: 'Lax' } as const;
    expect(() => serializeCookie('a', 'x; Domain=evil.example', options)).toThrow(/invalid value/);
    expect(() => serializeCookie('a b', 'x', options)).toThrow(/invalid cookie name/);
  });
});
