import { AppMetrics } from './app-metrics';

/** The value of the first `name` sample carrying every label (in whatever order they are printed). */
function sample(text: string, name: string, labels: readonly string[]): number | undefined {
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`${name}{`) && labels.every((label) => l.includes(label)));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

describe('AppMetrics', () => {
  it('labels every series with the app and keeps apps in one process apart', async () => {
    const a = new AppMetrics('crew-api');
    const b = new AppMetrics('auth-server');
    a.observeHttp('GET', '/v1/me', 200, 0.004);
    const text = await a.render();
    expect(
      sample(text, 'http_server_request_duration_seconds_count', [
        'app="crew-api"',
        'method="GET"',
        'route="/v1/me"',
        'status_code="200"',
      ]),
    ).toBe(1);
    expect(await b.render()).not.toContain('route="/v1/me"');
  });

  it('records a request no route served as unmatched', async () => {
    const m = new AppMetrics('crew-api');
    m.observeHttp('GET', undefined, 404, 0.001);
    expect(
      sample(await m.render(), 'http_server_request_duration_seconds_count', [
        'route="unmatched"',
        'status_code="404"',
      ]),
    ).toBe(1);
  });

  it('hands out one counter per name, however often a feature asks', async () => {
    const m = new AppMetrics('crew-api');
    m.counter('rate_limit_refusals_total', 'refusals', ['window']).inc({ window: 'minute' });
    m.counter('rate_limit_refusals_total', 'refusals', ['window']).inc({ window: 'minute' });
    expect(sample(await m.render(), 'rate_limit_refusals_total', ['window="minute"', 'app="crew-api"'])).toBe(
      2,
    );
  });

  it('reads a gauge when scraped', async () => {
    const m = new AppMetrics('crew-api');
    let backlog = 3;
    m.gauge('outbox_unpublished_messages', 'backlog', (g) => g.set(backlog));
    expect(sample(await m.render(), 'outbox_unpublished_messages', ['app="crew-api"'])).toBe(3);
    backlog = 0;
    expect(sample(await m.render(), 'outbox_unpublished_messages', ['app="crew-api"'])).toBe(0);
  });
});

describe('AppMetrics histograms and preset series', () => {
  it('observes a histogram by label, and hands out one per name', async () => {
    const m = new AppMetrics('crew-api');
    const h = m.histogram('rpc_client_duration_seconds', 'RPC calls', ['pattern', 'outcome']);
    expect(m.histogram('rpc_client_duration_seconds', 'RPC calls', ['pattern', 'outcome'])).toBe(h);
    h.observe({ pattern: 'auth.introspect', outcome: 'ok' }, 0.003);
    h.observe({ pattern: 'auth.introspect', outcome: 'ok' }, 2);
    const text = await m.render();
    const labels = ['app="crew-api"', 'pattern="auth.introspect"', 'outcome="ok"'];
    expect(sample(text, 'rpc_client_duration_seconds_count', labels)).toBe(2);
    expect(sample(text, 'rpc_client_duration_seconds_bucket', [...labels, 'le="0.005"'])).toBe(1);
    expect(sample(text, 'rpc_client_duration_seconds_bucket', [...labels, 'le="2.5"'])).toBe(2);
  });

  it('takes its own buckets', async () => {
    const m = new AppMetrics('crew-api');
    m.histogram('x_seconds', 'x', [], [1, 10]).observe(5);
    const text = await m.render();
    expect(sample(text, 'x_seconds_bucket', ['le="1"'])).toBe(0);
    expect(sample(text, 'x_seconds_bucket', ['le="10"'])).toBe(1);
    expect(text).not.toContain('x_seconds_bucket{le="0.005"');
  });

  it('presets every combination of known label values to 0, counters and histograms alike', async () => {
    const m = new AppMetrics('auth-server');
    const c = m.counter('oauth_token_requests_total', 'token requests', ['grant_type', 'outcome']);
    AppMetrics.preset(c, { grant_type: ['authorization_code', 'refresh_token'], outcome: ['issued'] });
    const h = m.histogram('webhook_attempt_duration_seconds', 'attempts', ['outcome']);
    AppMetrics.preset(h, { outcome: ['delivered', 'retry'] });
    c.inc({ grant_type: 'refresh_token', outcome: 'issued' });
    const text = await m.render();
    const issued = (grant: string) =>
      sample(text, 'oauth_token_requests_total', [`grant_type="${grant}"`, 'outcome="issued"']);
    expect(issued('authorization_code')).toBe(0);
    expect(issued('refresh_token')).toBe(1);
    expect(sample(text, 'oauth_token_requests_total', ['grant_type="other"'])).toBeUndefined();
    expect(sample(text, 'webhook_attempt_duration_seconds_count', ['outcome="retry"'])).toBe(0);
    expect(sample(text, 'webhook_attempt_duration_seconds_count', ['outcome="delivered"'])).toBe(0);
  });
});
