import type { Logger } from 'pino';
import type Redis from 'ioredis';
import { SignInService } from './sign-in.service';
import { SignInThrottle, type SignInAttempt } from './sign-in-throttle';
import type { UserEntity } from './user.entity';
import type { UsersService } from './users.service';

function fakeUsers(known: { email: string; password: string } | undefined) {
  const checked: string[] = [];
  const users = {
    verify: (email: string, password: string) => {
      checked.push(email);
      return Promise.resolve(
        known && known.email === email && known.password === password
          ? ({ userId: 'usr_1', email } as UserEntity)
          : undefined,
      );
    },
  } as unknown as UsersService;
  return { users, checked };
}

function fakeThrottle(attempt: SignInAttempt) {
  return { attempt: () => Promise.resolve(attempt) } as unknown as SignInThrottle;
}

describe('SignInService', () => {
  const known = { email: 'a@x.test', password: 'pw' };

  it('refuses a throttled attempt without checking the password', async () => {
    const { users, checked } = fakeUsers(known);
    const service = new SignInService(users, fakeThrottle({ admitted: false, retryAfterSeconds: 42 }));
    expect(await service.signIn('a@x.test', 'pw', '203.0.113.1')).toEqual({
      ok: false,
      retry_after_seconds: 42,
    });
    expect(checked).toEqual([]);
  });

  it('gives the reservation back on success only', async () => {
    const { users } = fakeUsers(known);
    let given = 0;
    const throttle = fakeThrottle({
      admitted: true,
      succeeded: () => {
        given += 1;
        return Promise.resolve();
      },
    });
    const service = new SignInService(users, throttle);
    expect(await service.signIn('a@x.test', 'wrong', undefined)).toEqual({ ok: false });
    expect(given).toBe(0);
    expect(await service.signIn('a@x.test', 'pw', undefined)).toEqual({
      ok: true,
      user_id: 'usr_1',
      email: 'a@x.test',
    });
    expect(given).toBe(1);
  });
});

describe('SignInThrottle with Redis unavailable', () => {
  it('admits the attempt and logs a warning rather than locking every member out', async () => {
    const warnings: unknown[] = [];
    const redis = { eval: () => Promise.reject(new Error('Connection is closed.')) } as unknown as Redis;
    const logger = { warn: (...args: unknown[]) => warnings.push(args) } as unknown as Logger;
    const attempt = await new SignInThrottle(redis, logger).attempt('a@x.test', '203.0.113.1');
    expect(attempt.admitted).toBe(true);
    expect(warnings).toHaveLength(1);
    expect(JSON.stringify(warnings)).not.toContain('a@x.test');
  });
});
