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
