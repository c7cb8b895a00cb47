import { authorizeRequest, basicAuthorization, codeVerifier, formBody, pkcePair, s256 } from './factories';

describe('test factories', () => {
  it('computes the S256 challenge of RFC 7636 Appendix B', () => {
    expect(s256('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe(
      'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    );
  });

  it('makes verifiers of the requested length from the RFC 7636 §4.1 alphabet, fresh each time', () => {
    for (const n of [42, 43, 128, 129])
      expect(codeVerifier(n)).toMatch(new RegExp(`^[A-Za-z0-9._~-]{${n}}$`));
    expect(pkcePair().verifier).not.toBe(pkcePair().verifier);
  });

  it('builds a complete authorization request and lets a test drop or change a parameter', () => {
    const req = authorizeRequest({ overrides: { state: undefined, code_challenge_method: 'plain' } });
    expect(Object.keys(req.params).sort()).toEqual(
      [
        'client_id',
        'code_challenge',
        'code_challenge_method',
        'redirect_uri',
        'response_type',
        'scope',
      ].sort(),
    );
    expect(req.params.code_challenge_method).toBe('plain');
    expect(req.params.code_challenge).toBe(s256(req.pkce.verifier));
  });

  it('encodes Basic credentials as RFC 6749 §2.3.1 says (form-urlencoded first)', () => {
    expect(basicAuthorization('a b', 'c:d')).toBe(`Basic ${Buffer.from('a+b:c%3Ad').toString('base64')}`);
  });

  it('keeps repeated names in a form body', () => {
    expect(
      formBody([
        ['a', '1'],
        ['a', '2'],
      ]),
    ).toBe('a=1&a=2');
  });
});
