import { constantTimeEqual } from './digest';

describe('constantTimeEqual', () => {
  const token = 'Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0Z2FycGx5';

  it('accepts the same string', () => {
    expect(constantTimeEqual(token, token)).toBe(true);
    expect(constantTimeEqual('', '')).toBe(true);
    expect(constantTimeEqual('crème', 'crème')).toBe(true);
  });

  it('refuses a string that differs anywhere', () => {
    expect(constantTimeEqual(token, `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`)).toBe(false);
    expect(constantTimeEqual(token, `x${token.slice(1)}`)).toBe(false);
    expect(constantTimeEqual('abc', 'ABC')).toBe(false);
  });

  it('refuses other lengths, shorter or longer, without throwing', () => {
    expect(constantTimeEqual(token, token.slice(1))).toBe(false);
    expect(constantTimeEqual(token, `${token}A`)).toBe(false);
    expect(constantTimeEqual(token, '')).toBe(false);
    expect(constantTimeEqual('', token)).toBe(false);
  });

  it('refuses anything that is not a string', () => {
    for (const presented of [undefined, null, 0, [token], { token }, Buffer.from(token)]) {
      expect(constantTimeEqual(token, presented)).toBe(false);
    }
  });
});
