import type { INestApplication } from '@nestjs/common';
import { MetricsServer } from '@svc/platform';

/** The base URL of an in-process app's metrics port (METRICS_PORT=0 in the tests: a free one). */
export function metricsUrl(app: INestApplication): string {
  return app.get(MetricsServer, { strict: false }).url;
}

/** `GET /metrics` on the app's metrics port (an in-process app, or a process's metrics URL): its text. */
export async function scrape(target: INestApplication | string): Promise<string> {
  const base = typeof target === 'string' ? target : metricsUrl(target);
  const res = await fetch(`${base}/metrics`);
  if (res.status !== 200) throw new Error(`GET ${base}/metrics answered ${res.status}`);
  return res.text();
}

/** The value of the sample `name` whose labels include every one of `labels`; undefined if none. */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = new Map([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.entries(labels).every(([k, v]) => have.get(k) === v)) return Number(m[3]);
  }
  return undefined;
}
