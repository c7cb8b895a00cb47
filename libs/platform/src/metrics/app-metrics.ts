import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Seconds; from a cache hit (~ms) to the 5 s webhook budget and the 2 s database timeouts. */
export const DURATION_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/**
 * One app's Prometheus registry (apps sharing a process keep theirs apart): Node process metrics,
 * HTTP answers by route pattern (never the raw path), and the features' own metrics.
 */
export class AppMetrics {
  readonly registry = new Registry();
  private readonly httpDuration: Histogram<'method' | 'route' | 'status_code'>;

  constructor(app: string) {
    this.registry.setDefaultLabels({ app });
    collectDefaultMetrics({ register: this.registry });
    this.httpDuration = new Histogram({
      name: 'http_server_request_duration_seconds',
      help: 'HTTP answers by method, route pattern and status',
      labelNames: ['method', 'route', 'status_code'],
      buckets: [...DURATION_BUCKETS],
      registers: [this.registry],
    });
  }

  /** `route`: Fastify's route pattern (`/v1/me/vessels`), or `unmatched` for a 404 of no route. */
  observeHttp(method: string, route: string | undefined, statusCode: number, seconds: number): void {
    this.httpDuration.observe(
      { method, route: route ?? 'unmatched', status_code: String(statusCode) },
      seconds,
    );
  }

  /** The app's counter of that name, made on first use (guards and services may be built more than once). */
  counter<L extends string>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> {
    const existing = this.registry.getSingleMetric(name);
    if (existing) return existing as Counter<L>;
    return new Counter({ name, help, labelNames, registers: [this.registry] });
  }

  /** The app's histogram of that name (seconds, DURATION_BUCKETS unless told), made on first use. */
  histogram<L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[] = [],
    buckets: readonly number[] = DURATION_BUCKETS,
  ): Histogram<L> {
    const existing = this.registry.getSingleMetric(name);
    if (existing) return existing as Histogram<L>;
    return new Histogram({ name, help, labelNames, buckets: [...buckets], registers: [this.registry] });
  }

  /** Sets every combination of `values` to 0, so `rate()` and alerts see each series from the first scrape. */
  static preset<L extends string>(
    metric: Counter<L> | Histogram<L>,
    values: { readonly [K in L]: readonly string[] },
  ): void {
    const names = Object.keys(values) as L[];
    const combinations = names.reduce<Partial<Record<L, string>>[]>(
      (acc, name) => acc.flatMap((partial) => values[name].map((v) => ({ ...partial, [name]: v }))),
      [{}],
    );
    for (const labels of combinations) {
      if (metric instanceof Counter) metric.inc(labels as Record<L, string>, 0);
      else metric.zero(labels as Record<L, string>);
    }
  }

  /** A gauge read when Prometheus scrapes: `read` answers the value(s) at that moment. */
  gauge<L extends string>(
    name: string,
    help: string,
    read: (gauge: Gauge<L>) => Promise<void> | void,
    labelNames: readonly L[] = [],
  ): Gauge<L> {
    const existing = this.registry.getSingleMetric(name);
    if (existing) return existing as Gauge<L>;
    return new Gauge({
      name,
      help,
      labelNames,
      registers: [this.registry],
      async collect() {
        await read(this);
      },
    });
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }
}
