/** The backing services of this test run (set by `npm test`, which isolates each run). */
export function testServices() {
  const need = (name: string) => {
    const value = process.env[name];
    if (!value) throw new Error(`${name} is not set: run the integration tests through \`npm test\``);
    return value;
  };
  return {
    databaseUrl: need('DATABASE_URL'),
    amqpUrl: need('AMQP_URL'),
    redisUrl: need('REDIS_URL'),
    redisKeyPrefix: process.env.REDIS_KEY_PREFIX ?? '',
  };
}

/** Polls `check` until it answers something other than undefined (a throw counts as not yet). */
export async function eventually<T>(
  check: () => Promise<T | undefined>,
  timeoutMs = 15_000,
  everyMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`condition not met within ${timeoutMs} ms${last ? `: ${String(last)}` : ''}`);
}
