import { ReadinessRegistry } from './readiness';

/** A dependency the test turns on and off; `hang` never answers. */
function dependency() {
  const state = { up: false, hang: false };
  const check = () =>
    state.hang
      ? new Promise<void>(() => undefined)
      : state.up
        ? Promise.resolve()
        : Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:6379'));
  return { state, check };
}

describe('ReadinessRegistry: readiness and shared dependencies', () => {
  let clock = Date.parse('2030-01-01T00:00:00Z');
  const now = () => clock;

  it('is not ready until every dependency has answered once (start-up still requires them)', async () => {
    const readiness = new ReadinessRegistry(now);
    const redis = dependency();
    const postgres = dependency();
    readiness.register('redis', redis.check);
    readiness.register('postgres', postgres.check);

    postgres.state.up = true;
    const before = await readiness.report();
    expect(before).toMatchObject({ ready: false, degraded: true });
    expect(before.checks.redis).toEqual({
      ok: false,
      error: 'connect ECONNREFUSED 127.0.0.1:6379',
      failing_since: '2030-01-01T00:00:00.000Z',
    });

    redis.state.up = true;
    expect(await readiness.report()).toEqual({
      ready: true,
      draining: false,
      degraded: false,
      checks: { redis: { ok: true }, postgres: { ok: true } },
    });
  });

  it('stays ready when a shared dependency fails after start-up, and reports it with its start', async () => {
    const readiness = new ReadinessRegistry(now);
    const redis = dependency();
    readiness.register('redis', redis.check);
    redis.state.up = true;
    expect((await readiness.report()).ready).toBe(true);

    redis.state.up = false;
    const firstFailure = clock;
    await readiness.report();
    clock += 10 * 60_000;
    // A long outage too: every replica would leave the Service at once otherwise.
    const during = await readiness.report();
    expect(during).toMatchObject({ ready: true, degraded: true });
    expect(during.checks.redis.failing_since).toBe(new Date(firstFailure).toISOString());

    redis.state.up = true;
    expect(await readiness.report()).toMatchObject({
      ready: true,
      degraded: false,
      checks: { redis: { ok: true } },
    });
  });

  it('counts a dependency that does not answer within the budget as failing, without hanging the probe', async () => {
    const readiness = new ReadinessRegistry(now);
    const redis = dependency();
    readiness.register('redis', redis.check);
    redis.state.hang = true;
    const started = Date.now();
    const report = await readiness.report(50);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(report).toMatchObject({
      ready: false,
      checks: { redis: { ok: false, error: 'no answer within 50 ms' } },
    });
  });

  it('is not ready while draining, whatever the dependencies say', async () => {
    const readiness = new ReadinessRegistry(now);
    const redis = dependency();
    redis.state.up = true;
    readiness.register('redis', redis.check);
    expect((await readiness.report()).ready).toBe(true);
    readiness.startDraining();
    expect(await readiness.report()).toMatchObject({ ready: false, draining: true, degraded: false });
  });
});
