import { isInternalToken } from './internal-token.guard';

describe('isInternalToken', () => {
  const expected = 'sandbox-internal-token';

  it('accepts the token with the Bearer scheme, in any case (RFC 9110 §11.1)', () => {
    expect(isInternalToken(`Bearer ${expected}`, expected)).toBe(true);
    expect(isInternalToken(`bearer ${expected}`, expected)).toBe(true);
  });

  it.each([
    undefined,
    '',
    'Bearer',
    'Bearer ',
    `Basic ${expected}`,
    `Bearer ${expected}x`,
    `Bearer ${expected.slice(1)}`,
    `Bearer ${expected} extra`,
    expected,
  ])('refuses %p', (header) => {
    expect(isInternalToken(header, expected)).toBe(false);
  });
});
