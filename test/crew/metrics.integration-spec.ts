import { rateLimitKey } from '../../libs/security/src/limits/rate-limit';
import { createCrewMember } from '../support/app-factories';
import { useCrewApi } from '../support/starters/crew-api';
import { accessToken } from '../support/oauth/flow';
import { metricsUrl, sample } from '../support/metrics';

/**
 * `GET /metrics` on crew-api's metrics port (Prometheus text format, apart from the API port): the Node process metrics, HTTP
 * answers by route pattern (never by raw path), the outbox backlog read at scrape time, and the
 * rate limiter's refusals. The limit here is 3 a minute so a refusal is cheap to provoke.
 */
jest.setTimeout(30_000);

const { auth, crew } = useCrewApi({ RATE_LIMIT_PER_MINUTE: '3' });

// The sandbox partner's window is shared by every spec of the run (run in turn): start it empty.
beforeEach(async () => {
  await auth.redis.del(rateLimitKey('sandbox-partner'));
});

async function scrape(): Promise<string> {
  const res = await fetch(`${metricsUrl(crew.app)}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return res.text();
}

describe('GET /metrics', () => {
  it('is served on the metrics port only: the API port answers 404 like any unknown route', async () => {
    const api = await fetch(`${crew.url}/metrics`);
    expect(api.status).toBe(404);
    expect(await api.text()).not.toContain('process_cpu_user_seconds_total');
    const other = await fetch(`${metricsUrl(crew.app)}/v1/me`);
    expect(other.status).toBe(404);
    expect((await fetch(`${metricsUrl(crew.app)}/metrics`, { method: 'POST' })).status).toBe(404);
    // The probes stay on the API port.
    expect((await fetch(`${crew.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${metricsUrl(crew.app)}/healthz`)).status).toBe(404);
  });

  it('counts answers by route pattern and status, never by raw path', async () => {
    const member = await createCrewMember(auth, crew);
    const token = await accessToken(auth, member);
    expect((await crew.get('/v1/me', token)).status).toBe(200);
    expect((await crew.get('/v1/me/vessels/not-a-route-123', token)).status).toBe(404);

    const text = await scrape();
    const ok = sample(text, 'http_server_request_duration_seconds_count', {
      app: 'crew-api',
      method: 'GET',
      route: '/v1/me',
      status_code: '200',
    });
    expect(ok).toBeGreaterThanOrEqual(1);
    expect(
      sample(text, 'http_server_request_duration_seconds_count', { route: 'unmatched', status_code: '404' }),
    ).toBeGreaterThanOrEqual(1);
    expect(text).not.toContain('not-a-route-123');
    expect(text).not.toContain(token);
  });

  it('has the Node process metrics and the outbox backlog', async () => {
    const text = await scrape();
    expect(sample(text, 'process_cpu_user_seconds_total', { app: 'crew-api' })).toBeGreaterThan(0);
    expect(sample(text, 'nodejs_eventloop_lag_p99_seconds', { app: 'crew-api' })).toBeGreaterThanOrEqual(0);

    const [{ n }] = (
      await crew.db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM crew.outbox_messages WHERE published_at IS NULL',
      )
    ).rows;
    const unpublished = sample(text, 'outbox_unpublished_messages', { app: 'crew-api' });
    expect(unpublished).toBeGreaterThanOrEqual(0);
    // The relay runs while the test reads, so the two counts may differ by what it just published.
    expect(unpublished).toBeLessThanOrEqual(n + 100);
    expect(sample(text, 'outbox_oldest_unpublished_age_seconds', { app: 'crew-api' })).toBeGreaterThanOrEqual(
      0,
    );
  });

  it('counts requests refused by the rate limiter, by window, partner and tier', async () => {
    const member = await createCrewMember(auth, crew);
    const token = await accessToken(auth, member);
    const refusals = { window: 'minute', partner: 'sandbox-partner', tier: 'standard' };
    const before = sample(await scrape(), 'rate_limit_refusals_total', refusals) ?? 0;
    const statuses: number[] = [];
    for (let i = 0; i < 6; i += 1) statuses.push((await crew.get('/v1/me', token)).status);
    const refused = statuses.filter((s) => s === 429).length;
    expect(refused).toBeGreaterThanOrEqual(3);
    expect(sample(await scrape(), 'rate_limit_refusals_total', refusals)).toBe(before + refused);
  });
});
