import type { Logger } from 'pino';
import type { RedisClient } from '@svc/platform';
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

describe('SignInThrottle', () => {
  function throttleWith(evalReply: () => Promise<unknown>) {
    const calls: unknown[][] = [];
    const warnings: unknown[] = [];
    const redis = {
      eval: (...args: unknown[]) => {
        calls.push(args);
        return evalReply();
      },
    } as unknown as RedisClient;
    const logger = { warn: (...args: unknown[]) => warnings.push(args) } as unknown as Logger;
    return {
      throttle: new SignInThrottle(redis, logger, { SIGN_IN_FAILURES_PER_ADDRESS: 30 }),
      calls,
      warnings,
    };
  }

  it('gives both counters of an account one hash tag, so the script runs on Redis Cluster', async () => {
    const { throttle, calls } = throttleWith(async () => [1]);
    await throttle.attempt('A@X.test', '203.0.113.1');
    // First the address's bucket across accounts: one key in a call of its own.
    expect(calls[0].slice(1, 3)).toEqual([1, 'signin-address:{203.0.113.1}']);
    const [, numKeys, perAddress, perAccount] = calls[1] as [string, number, string, string];
    expect(numKeys).toBe(2);
    const tag = /^signin:(\{[A-Za-z0-9_-]{43}\})/.exec(perAccount)?.[1];
    expect(tag).toBeDefined();
    expect(perAccount).toBe(`signin:${tag}`);
    expect(perAddress).toBe(`signin:${tag}:203.0.113.1`);
    expect(perAddress).not.toContain('x.test');
  });

  it('keys an IPv6 client by its /64 (CLIENT_IPV6_PREFIX), so the addresses of one network share both address counters', async () => {
    const { throttle, calls } = throttleWith(async () => [1]);
    await throttle.attempt('a@x.test', '2001:db8:5:6::1');
    await throttle.attempt('a@x.test', '2001:db8:5:6:ffff::2');
    const net = '2001:db8:5:6:0:0:0:0/64';
    expect([calls[0][2], calls[2][2]]).toEqual([`signin-address:{${net}}`, `signin-address:{${net}}`]);
    expect(calls[1][2]).toMatch(new RegExp(`^signin:\\{[A-Za-z0-9_-]{43}\\}:${net.replace(/[.]/g, '\\.')}$`));
    expect(calls[3][2]).toBe(calls[1][2]);
  });

  it('refuses before the account script when the address’s bucket is full', async () => {
    const { throttle, calls } = throttleWith(async () => [0, 61_000]);
    expect(await throttle.attempt('a@x.test', '203.0.113.1')).toEqual({
      admitted: false,
      retryAfterSeconds: 61,
    });
    expect(calls).toHaveLength(1);
  });

  it('gives the address’s reservation back when the account script refuses', async () => {
    const replies = [[1], [0, 5_000], 1];
    const { throttle, calls } = throttleWith(async () => replies.shift());
    expect(await throttle.attempt('a@x.test', '203.0.113.1')).toEqual({
      admitted: false,
      retryAfterSeconds: 5,
    });
    expect(calls).toHaveLength(3);
    expect(calls[2].slice(1, 3)).toEqual([1, 'signin-address:{203.0.113.1}']);
  });

  it.each([
    ['Redis is unreachable', new Error('Connection is closed.')],
    [
      'Redis refuses the script',
      Object.assign(new Error('CROSSSLOT Keys in request don’t hash to the same slot'), {
        name: 'ReplyError',
      }),
    ],
    [
      'the primary was demoted',
      Object.assign(new Error('READONLY You can’t write against a read only replica.'), {
        name: 'ReplyError',
      }),
    ],
  ])('refuses the attempt (fails closed, 503 "try again") when %s', async (_case, error) => {
    const { throttle, warnings } = throttleWith(() => Promise.reject(error));
    await expect(throttle.attempt('a@x.test', '203.0.113.1')).rejects.toMatchObject({
      name: 'DependencyUnavailableError',
      dependency: 'redis (sign-in throttle)',
    });
    expect(warnings).toHaveLength(1);
    expect(JSON.stringify(warnings)).not.toContain('a@x.test');
  });
});
