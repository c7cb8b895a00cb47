import Redis from 'ioredis';
import type { AppEnv } from '../config/config';
import { EvictionPolicyCheck } from './eviction-policy';
import type { RedisClient } from './redis-client';

const reply = (message: string) => Object.assign(new Error(message), { name: 'ReplyError' });

/** A single-server client whose CONFIG GET the test answers. */
function check(appEnv: AppEnv, config: () => Promise<unknown>) {
  const redis = Object.create(Redis.prototype) as Redis;
  let asked = 0;
  Object.assign(redis, {
    config: () => {
      asked += 1;
      return config();
    },
  });
  const refused: string[] = [];
  const warned: string[] = [];
  const policy = new EvictionPolicyCheck(redis as RedisClient, {
    appEnv,
    variable: 'REDIS_URL',
    logger: { warn: (_obj: unknown, msg?: string) => void warned.push(String(msg)) } as never,
    refuse: (variable, reason) => void refused.push(`${variable} ${reason}`),
  });
  return { policy, refused, warned, asked: () => asked };
}

describe('EvictionPolicyCheck (the state Redis)', () => {
  it('accepts noeviction silently, and asks only once', async () => {
    const c = check('production', async () => ['maxmemory-policy', 'noeviction']);
    await c.policy.verify();
    await c.policy.verify();
    expect(c.refused).toEqual([]);
    expect(c.warned).toEqual([]);
    expect(c.asked()).toBe(1);
  });

  it.each(['allkeys-lru', 'volatile-lru', 'volatile-ttl', 'allkeys-random'])(
    'refuses %s in production, naming the variable',
    async (policy) => {
      const c = check('production', async () => ['maxmemory-policy', policy]);
      await c.policy.verify();
      expect(c.refused).toHaveLength(1);
      expect(c.refused[0]).toMatch(
        new RegExp(`^REDIS_URL points at a Redis with maxmemory-policy ${policy};`),
      );
    },
  );

  it('only warns about an evicting policy in the sandbox', async () => {
    const c = check('sandbox', async () => ['maxmemory-policy', 'allkeys-lru']);
    await c.policy.verify();
    expect(c.refused).toEqual([]);
    expect(c.warned).toHaveLength(1);
  });

  it('warns once and carries on when CONFIG is forbidden (managed Redis)', async () => {
    const c = check('production', () => Promise.reject(reply("ERR unknown command 'CONFIG'")));
    await c.policy.verify();
    await c.policy.verify();
    expect(c.refused).toEqual([]);
    expect(c.warned).toHaveLength(1);
    expect(c.asked()).toBe(1);
  });

  it('asks again later while Redis does not answer, and keeps the app from being ready meanwhile', async () => {
    let answer: () => Promise<unknown> = () => Promise.reject(new Error('Connection is closed.'));
    const c = check('production', () => answer());
    await expect(c.policy.verify()).rejects.toThrow('Connection is closed.');
    answer = async () => ['maxmemory-policy', 'allkeys-lru'];
    await c.policy.verify();
    expect(c.refused).toHaveLength(1);
  });
});
