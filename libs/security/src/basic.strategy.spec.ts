import { isWellFormedBasic } from './basic.strategy';

const b64 = (text: string) => Buffer.from(text).toString('base64');

describe('isWellFormedBasic', () => {
  it('accepts one client_id:client_secret pair, any case of the scheme', () => {
    expect(isWellFormedBasic(`Basic ${b64('sandbox-partner:sandbox-secret')}`)).toBe(true);
    expect(isWellFormedBasic(`basic ${b64('a:b')}`)).toBe(true);
  });

  it.each([
    ['a secret with a second colon (passport-http would cut it)', `Basic ${b64('a:secret:more')}`],
    ['no colon', `Basic ${b64('just-a-name')}`],
    ['another scheme that contains "basic"', `NotBasic ${b64('a:b')}`],
    ['a bearer token', 'Bearer abc'],
    ['no credentials', 'Basic '],
    ['junk after the credentials', `Basic ${b64('a:b')} extra`],
  ])('refuses %s', (_what, header) => {
    expect(isWellFormedBasic(header)).toBe(false);
  });
});
