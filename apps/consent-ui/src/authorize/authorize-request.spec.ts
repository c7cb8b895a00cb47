import { parseAuthorizeQuery, parseDecisionForm } from './authorize-request';

describe('parseAuthorizeQuery', () => {
  it('takes the first value of each parameter and decodes form encoding', () => {
    expect(
      parseAuthorizeQuery(
        '/oauth/authorize?response_type=code&client_id=sandbox-partner&scope=profile%3Aread+seatime:read&state=a%26b',
      ),
    ).toEqual({
      params: {
        response_type: 'code',
        client_id: 'sandbox-partner',
        scope: 'profile:read seatime:read',
        state: 'a&b',
      },
      repeated: [],
    });
  });

  it('names repeated parameters once each (RFC 6749 §3.1)', () => {
    const parsed = parseAuthorizeQuery('/oauth/authorize?state=1&client_id=a&state=2&client_id=b&state=3');
    expect(parsed.params).toEqual({ state: '1', client_id: 'a' });
    expect([...parsed.repeated].sort()).toEqual(['client_id', 'state']);
  });

  it('copes with no query, empty values and awkward names', () => {
    expect(parseAuthorizeQuery('/oauth/authorize')).toEqual({ params: {}, repeated: [] });
    expect(parseAuthorizeQuery('/oauth/authorize?state=&__proto__=x&constructor=y')).toEqual({
      params: { state: '', ['__proto__']: 'x', constructor: 'y' },
      repeated: [],
    });
  });
});

describe('parseDecisionForm', () => {
  it('separates the posted parameters from the form’s own fields', () => {
    expect(
      parseDecisionForm({
        'param.client_id': 'sandbox-partner',
        'param.decision': 'not the decision',
        csrf: 'token',
        decision: 'allow',
        stray: 'ignored',
      }),
    ).toEqual({
      params: { client_id: 'sandbox-partner', decision: 'not the decision' },
      csrf: 'token',
      decision: 'allow',
    });
  });

  it('copes with no body', () => {
    expect(parseDecisionForm(undefined)).toEqual({ params: {}, csrf: undefined, decision: undefined });
  });
});
