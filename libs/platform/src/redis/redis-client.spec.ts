import Redis from 'ioredis';
import { createRedis, isRedisUnavailable } from './redis-client';

const reply = (message: string) => Object.assign(new Error(message), { name: 'ReplyError' });

describe('isRedisUnavailable', () => {
  it.each([
    ['a closed connection', new Error('Connection is closed.')],
    ['the command timeout', new Error('Command timed out')],
    [
      'a Cluster without a slot map yet',
      new Error("Cluster isn't ready and enableOfflineQueue options is false"),
    ],
    ['a demoted primary', reply("READONLY You can't write against a read only replica.")],
    ['a Cluster failing over', reply('CLUSTERDOWN The cluster is down')],
    ['a loading replica', reply('LOADING Redis is loading the dataset in memory')],
  ])('counts %s as unavailable (503, retry)', (_case, err) => {
    expect(isRedisUnavailable(err)).toBe(true);
  });

  it.each([
    ['keys of two slots in one script', reply("CROSSSLOT Keys in request don't hash to the same slot")],
    ['a script error', reply('ERR user_script:1: Script attempted to access nonexistent global variable')],
    ['a wrong type', reply('WRONGTYPE Operation against a key holding the wrong kind of value')],
  ])('counts %s as a fault of ours, not an outage', (_case, err) => {
    expect(isRedisUnavailable(err)).toBe(false);
  });
});

describe('createRedis', () => {
  // Cluster and Sentinel clients are built and used against real servers in the integration tier
  // (test/redis, libs/security); here only what needs no server.
  it('builds a single-server client from REDIS_URL with the fail-fast options', async () => {
    const client = createRedis({ REDIS_URL: 'redis://127.0.0.1:1/2', REDIS_KEY_PREFIX: 'production:' });
    client.on('error', () => undefined);
    try {
      expect(client).toBeInstanceOf(Redis);
      expect(client.options).toMatchObject({
        port: 1,
        db: 2,
        keyPrefix: 'production:',
        enableOfflineQueue: false,
        commandTimeout: 1000,
      });
    } finally {
      client.disconnect();
    }
  });
});
