import { randomBytes } from 'node:crypto';
import { isWellFormedAccessToken } from './introspection';

describe('isWellFormedAccessToken', () => {
  it('accepts the prefix and 43 base64url characters auth-server mints', () => {
    expect(isWellFormedAccessToken(`at_${randomBytes(32).toString('base64url')}`)).toBe(true);
    expect(isWellFormedAccessToken(`at_${'-_'.repeat(21)}A`)).toBe(true);
  });

  it.each([
    ['another prefix', `rt_${randomBytes(32).toString('base64url')}`],
    ['no prefix', randomBytes(32).toString('base64url')],
    ['one character short', `at_${randomBytes(32).toString('base64url').slice(1)}`],
    ['one character long', `at_${randomBytes(32).toString('base64url')}A`],
    ['standard base64', `at_${'+/'.repeat(21)}A`],
    ['padding', `at_${randomBytes(32).toString('base64url').slice(1)}=`],
    ['a trailing newline', `at_${randomBytes(32).toString('base64url')}\n`],
    ['random garbage', 'garbage'],
    ['empty', ''],
  ])('refuses %s', (_case, token) => {
    expect(isWellFormedAccessToken(token)).toBe(false);
  });
});
