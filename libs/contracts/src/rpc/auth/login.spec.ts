import { ContractViolation } from '../rpc';
import { AUTH_LOGIN } from './login';

describe('auth.login', () => {
  it('carries the browser address when consent-ui knows it, and nothing when it does not', () => {
    expect(AUTH_LOGIN.parseRequest({ email: 'a@x.test', password: 'p', client_ip: '203.0.113.7' })).toEqual({
      email: 'a@x.test',
      password: 'p',
      client_ip: '203.0.113.7',
    });
    expect(AUTH_LOGIN.parseRequest({ email: 'a@x.test', password: 'p' })).toEqual({
      email: 'a@x.test',
      password: 'p',
    });
    expect(() =>
      AUTH_LOGIN.parseRequest({ email: 'a@x.test', password: 'p', client_ip: 'x'.repeat(65) }),
    ).toThrow(ContractViolation);
  });

  it('refuses a NUL in any string field: no app could store or look it up', () => {
    expect(() => AUTH_LOGIN.parseRequest({ email: 'a@x.test\u0000', password: 'p' })).toThrow(
      ContractViolation,
    );
    expect(() => AUTH_LOGIN.parseRequest({ email: 'a@x.test', password: 'p\u0000' })).toThrow(
      ContractViolation,
    );
  });

  it('reads a refusal, a throttled refusal and a sign-in', () => {
    expect(AUTH_LOGIN.parseResponse({ ok: false })).toEqual({ ok: false });
    expect(AUTH_LOGIN.parseResponse({ ok: false, retry_after_seconds: 90 })).toEqual({
      ok: false,
      retry_after_seconds: 90,
    });
    expect(AUTH_LOGIN.parseResponse({ ok: true, user_id: 'usr_1', email: 'a@x.test' })).toEqual({
      ok: true,
      user_id: 'usr_1',
      email: 'a@x.test',
    });
  });

  it.each([0, -5, 1.5, '90'])('refuses retry_after_seconds %p', (wait) => {
    expect(() => AUTH_LOGIN.parseResponse({ ok: false, retry_after_seconds: wait })).toThrow(
      ContractViolation,
    );
  });
});
