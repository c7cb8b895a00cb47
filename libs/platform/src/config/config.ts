/**
 * Environment configuration, validated before anything starts. An app with a bad or missing
 * variable refuses to start with a message naming every offending variable, so a typo in a
 * Deployment fails the rollout instead of misbehaving at the first request.
 */
import { SANDBOX_PARTNERS, SANDBOX_PASSWORD, SANDBOX_WEBHOOK_SECRET } from '@svc/contracts';

export type AppEnv = 'sandbox' | 'production';

export interface VarSpec<T> {
  readonly description: string;
  /**
   * The value used when the variable is unset, as it would be written (`30m`, not 1800000), and
   * the sandbox's own where it differs. Read-only documentation (docs/configuration.md); `parse`
   * applies them.
   */
  readonly default?: string;
  readonly sandboxDefault?: string;
  /** A secret, or a value that may carry one (a password in a URL): never logged, never quoted. */
  readonly secret?: boolean;
  /**
   * Parses the raw value (undefined when unset); throws a plain Error with the reason. `env` is
   * the whole environment, for defaults derived from another variable.
   */
  parse(raw: string | undefined, appEnv: AppEnv, env?: NodeJS.ProcessEnv): T;
}

export class ConfigError extends Error {
  constructor(readonly problems: readonly { variable: string; reason: string }[]) {
    super(`Invalid configuration: ${problems.map((p) => `${p.variable} ${p.reason}`).join('; ')}`);
    this.name = 'ConfigError';
  }
}

export type Defaults = { default?: string; sandboxDefault?: string };

function isSet(raw: string | undefined): raw is string {
  return raw !== undefined && raw.trim() !== '';
}

function withDefault(raw: string | undefined, appEnv: AppEnv, d: Defaults): string | undefined {
  if (isSet(raw)) return raw.trim();
  if (appEnv === 'sandbox' && d.sandboxDefault !== undefined) return d.sandboxDefault;
  return d.default;
}

/** A required variable: its value, or else its default, goes through `check`. */
export function variable<T>(
  description: string,
  d: Defaults,
  check: (value: string, appEnv: AppEnv) => T,
): VarSpec<T> {
  return {
    description,
    default: d.default,
    sandboxDefault: d.sandboxDefault,
    parse(raw, appEnv) {
      const value = withDefault(raw, appEnv, d);
      if (value === undefined) throw new Error('is required');
      return check(value, appEnv);
    },
  };
}

export function str(description: string, d: Defaults = {}): VarSpec<string> {
  return variable(description, d, (value) => value);
}

export function optionalStr(description: string, d: Defaults = {}): VarSpec<string | undefined> {
  return { description, ...d, parse: (raw, env) => withDefault(raw, env, d) };
}

function parseUrl(value: string, protocols: readonly string[]): URL {
  if (!URL.canParse(value)) throw new Error('is not a valid URL');
  const parsed = new URL(value);
  if (!protocols.includes(parsed.protocol.replace(/:$/, ''))) {
    throw new Error(`must use ${protocols.join(' or ')}`);
  }
  return parsed;
}

export function url(description: string, protocols: readonly string[], d: Defaults = {}): VarSpec<string> {
  return variable(description, d, (value) => {
    parseUrl(value, protocols);
    return value;
  });
}

export function int(
  description: string,
  opts: Defaults & { min?: number; max?: number } = {},
): VarSpec<number> {
  return variable(description, opts, (value) => {
    if (!/^-?\d+$/.test(value)) throw new Error(`must be an integer, got "${value}"`);
    const n = Number(value);
    if (opts.min !== undefined && n < opts.min) throw new Error(`must be >= ${opts.min}`);
    if (opts.max !== undefined && n > opts.max) throw new Error(`must be <= ${opts.max}`);
    return n;
  });
}

export function oneOf<const T extends string>(
  description: string,
  values: readonly T[],
  d: Defaults = {},
): VarSpec<T> {
  return variable(description, d, (value) => {
    if (!(values as readonly string[]).includes(value))
      throw new Error(`must be one of ${values.join(', ')}`);
    return value as T;
  });
}

/**
 * Every value the sandbox publishes (README, seed, docs). A production secret equal to one of them
 * is as good as no secret, so it is refused like a missing one.
 */
const PUBLISHED_SANDBOX_VALUES = new Set<string>([
  SANDBOX_WEBHOOK_SECRET,
  SANDBOX_PASSWORD,
  ...SANDBOX_PARTNERS.map((p) => p.client_secret),
]);

/**
 * The connection passwords the sandbox publishes (`npm start`, compose, the k8s sandbox examples):
 * `sandbox-postgres[-<schema>]-password`, `sandbox-rabbitmq[-<app>]-password`.
 */
const PUBLISHED_CONNECTION_PASSWORD = /^sandbox-(postgres|rabbitmq)(-[a-z-]+)?-password$/;

/**
 * A connection URL that may carry a password: production refuses one the sandbox publishes, so
 * an app never reaches a production database or broker with credentials everyone knows.
 */
export function connectionUrl(description: string, protocols: readonly string[]): VarSpec<string> {
  const spec = variable(description, {}, (value, appEnv) => {
    const password = decodeURIComponent(parseUrl(value, protocols).password);
    if (
      appEnv === 'production' &&
      (PUBLISHED_CONNECTION_PASSWORD.test(password) || PUBLISHED_SANDBOX_VALUES.has(password))
    ) {
      throw new Error('must not carry a published sandbox password in production');
    }
    return value;
  });
  return { ...spec, secret: true };
}

/**
 * A secret: in sandbox it may fall back to a fixed, published value; in production it is
 * required, at least `minLength` characters, and never a published sandbox value (its own
 * sandbox default included), so one forgotten variable fails the rollout instead of serving a
 * writable records API or forgeable cursors with keys everyone knows.
 */
export function secret(
  description: string,
  opts: { sandboxDefault: string; minLength: number; check?: (value: string) => void },
): VarSpec<string> {
  const forbidden = new Set([...PUBLISHED_SANDBOX_VALUES, opts.sandboxDefault]);
  const spec = variable(
    `${description} (secret: at least ${opts.minLength} characters; no default in production)`,
    { sandboxDefault: opts.sandboxDefault },
    (value, appEnv) => {
      if (appEnv === 'production') {
        if (value.length < opts.minLength) throw new Error(`must be at least ${opts.minLength} characters`);
        if (forbidden.has(value)) throw new Error('must not be a published sandbox value in production');
      }
      opts.check?.(value);
      return value;
    },
  );
  return { ...spec, secret: true };
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses `500ms`, `2s`, `5m`, `2h`, `1d` into milliseconds. */
export function parseDuration(text: string): number {
  const m = /^(\d+)(ms|s|m|h|d)$/.exec(text.trim());
  if (!m) throw new Error(`"${text}" is not a duration like 30s, 5m or 2h`);
  return Number(m[1]) * UNIT_MS[m[2]];
}

export function duration(description: string, d: Defaults = {}): VarSpec<number> {
  return variable(description, d, parseDuration);
}

export function durationList(description: string, d: Defaults = {}): VarSpec<number[]> {
  return variable(description, d, (value) => {
    const parts = value.split(',').filter((p) => p.trim() !== '');
    if (parts.length === 0) throw new Error('must list at least one duration');
    return parts.map((p) => parseDuration(p));
  });
}

export type ConfigSpec = Record<string, VarSpec<unknown>>;
export type ConfigOf<S extends ConfigSpec> = {
  readonly [K in keyof S]: S[K] extends VarSpec<infer T> ? T : never;
};

/** The standard sampler names of the OpenTelemetry environment specification that the apps accept. */
export const TRACE_SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;

/**
 * OTEL_RESOURCE_ATTRIBUTES as the OpenTelemetry environment specification writes it: `key=value`
 * pairs separated by commas, keys and values percent-decoded. A malformed list is refused (the
 * specification lets an SDK drop it silently; a typo in a Deployment should fail the rollout).
 */
export function parseResourceAttributes(raw: string): Record<string, string> {
  const attributes: Record<string, string> = {};
  for (const pair of raw.split(',')) {
    const at = pair.indexOf('=');
    const key = at > 0 ? pair.slice(0, at).trim() : '';
    if (key === '' || !/^[A-Za-z0-9._%-]+$/.test(key))
      throw new Error(`must be key=value pairs separated by commas (bad pair ${JSON.stringify(pair)})`);
    try {
      attributes[decodeURIComponent(key)] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      throw new Error(`has a value that is not percent-encoded (pair ${JSON.stringify(pair)})`);
    }
  }
  return attributes;
}

/**
 * Tracing, under the standard OpenTelemetry variable names so that an operator's usual settings
 * work. Off (nothing of the SDK loaded) unless OTEL_EXPORTER_OTLP_ENDPOINT is set.
 */
export const TRACING_CONFIG = {
  OTEL_EXPORTER_OTLP_ENDPOINT: {
    description: 'OTLP/HTTP collector base URL (spans go to its /v1/traces); unset: tracing is off',
    parse(raw) {
      if (!isSet(raw)) return undefined;
      parseUrl(raw.trim(), ['http', 'https']);
      return raw.trim().replace(/\/+$/, '');
    },
  } satisfies VarSpec<string | undefined>,
  OTEL_TRACES_SAMPLER: oneOf('which traces are recorded (OpenTelemetry sampler name)', TRACE_SAMPLERS, {
    default: 'parentbased_always_on',
  }),
  OTEL_SERVICE_NAME: optionalStr(
    "the spans' `service.name`; unset: the app's name (auth-server, crew-api, …)",
  ),
  OTEL_RESOURCE_ATTRIBUTES: {
    description:
      'more resource attributes of every span, `key=value` pairs separated by commas, values percent-encoded (`k8s.pod.name=crew-api-7d9f,k8s.namespace.name=crew-records`); they win over the defaults (`service.version`, `deployment.environment.name`), `OTEL_SERVICE_NAME` over their `service.name`',
    parse(raw) {
      return isSet(raw) ? parseResourceAttributes(raw.trim()) : {};
    },
  } satisfies VarSpec<Readonly<Record<string, string>>>,
  OTEL_TRACES_SAMPLER_ARG: {
    description: 'share of traces kept by traceidratio and parentbased_traceidratio, from 0 to 1',
    default: '1',
    parse(raw) {
      if (!isSet(raw)) return 1;
      const value = raw.trim();
      const ratio = Number(value);
      if (!/^\d*\.?\d+(e-?\d+)?$/i.test(value) || !(ratio >= 0 && ratio <= 1)) {
        throw new Error(`must be a number from 0 to 1, got "${value}"`);
      }
      return ratio;
    },
  } satisfies VarSpec<number>,
} satisfies ConfigSpec;

/**
 * The base of the error documentation: Problem types are `{DOCS_URL}/errors/<code>`. By default
 * the gateway's own `/docs`, i.e. `{PUBLIC_BASE_URL}/docs`, which the gateway serves.
 */
function docsUrl(): VarSpec<string> {
  const spec = url('base of the error documentation; Problem types are {DOCS_URL}/errors/<code>', [
    'http',
    'https',
  ]);
  return {
    description: `${spec.description} (default: {PUBLIC_BASE_URL}/docs)`,
    default: '{PUBLIC_BASE_URL}/docs',
    parse(raw, appEnv, env = {}) {
      if (isSet(raw)) return spec.parse(raw, appEnv);
      const base = withDefault(env.PUBLIC_BASE_URL, appEnv, { sandboxDefault: 'http://localhost:8080' });
      if (base === undefined) throw new Error('is required (or set PUBLIC_BASE_URL)');
      return spec.parse(`${base.replace(/\/+$/, '')}/docs`, appEnv);
    },
  };
}

/** The Prometheus port: its own, so a typo that made it PORT's would put metrics behind the gateway. */
function metricsPort(): VarSpec<number> {
  const spec = int(
    'port of the Prometheus endpoint (GET /metrics), apart from PORT and never routed by the gateway; 0 picks a free port',
    { default: '9464', min: 0, max: 65535 },
  );
  return {
    ...spec,
    parse(raw, appEnv, env = {}) {
      const port = spec.parse(raw, appEnv);
      if (port !== 0 && String(port) === env.PORT?.trim()) throw new Error('must differ from PORT');
      return port;
    },
  };
}

export const BASE_CONFIG = {
  APP_ENV: oneOf(
    'sandbox or production; production seeds nothing and has no default secrets',
    ['sandbox', 'production'] as const,
    // Safe by default: a deployment that forgets APP_ENV gets production's rules (no seeded data,
    // no published secrets), never the sandbox's.
    { default: 'production' },
  ),
  PORT: int('HTTP port of the app', { min: 1, max: 65535 }),
  METRICS_PORT: metricsPort(),
  LOG_LEVEL: oneOf(
    'pino log level',
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const,
    { default: 'info' },
  ),
  ...TRACING_CONFIG,
  PUBLIC_BASE_URL: url('base URL partners use (the gateway)', ['http', 'https'], {
    sandboxDefault: 'http://localhost:8080',
  }),
  DOCS_URL: docsUrl(),
  SHUTDOWN_DELAY_MS: int(
    'after SIGTERM, time readiness reports "draining" before the server stops accepting',
    { default: '0', min: 0 },
  ),
  SHUTDOWN_TIMEOUT_MS: int('hard ceiling on a graceful shutdown', { default: '25000', min: 1000 }),
} satisfies ConfigSpec;

export const DATABASE_CONFIG = {
  DATABASE_URL: connectionUrl('PostgreSQL connection URL', ['postgres', 'postgresql']),
  DATABASE_POOL_SIZE: int('connections per process', { default: '10', min: 1, max: 200 }),
} satisfies ConfigSpec;

/**
 * Read by the CLI only (`migrate`, which runs as the role owning the schemas): the login role the
 * serving app connects as, granted its own schema's rows and nothing else. Unset: no grant (the
 * app then connects as the owner, as a developer running one app alone does).
 */
export const MIGRATION_CONFIG = {
  DATABASE_APP_ROLE: {
    description: "the serving app's PostgreSQL login role, granted its schema by `migrate`",
    parse(raw) {
      const value = raw?.trim() ?? '';
      if (value === '') return undefined;
      if (!/^[a-z_][a-z0-9_]{0,62}$/.test(value)) {
        throw new Error('must be a lower-case PostgreSQL role name (a-z, 0-9, _; at most 63)');
      }
      return value;
    },
  } satisfies VarSpec<string | undefined>,
} satisfies ConfigSpec;

export interface HostPort {
  readonly host: string;
  readonly port: number;
}

/** `host:port,host:port`; `[::1]:26379` for IPv6. */
export function parseHostPorts(text: string): HostPort[] {
  const parts = text
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
  if (parts.length === 0) throw new Error('must list at least one host:port');
  return parts.map((part) => {
    const m = /^(\[[^\]]+\]|[^:\s]+):(\d{1,5})$/.exec(part);
    const port = m ? Number(m[2]) : NaN;
    if (!m || port < 1 || port > 65535) throw new Error(`"${part}" is not host:port`);
    return { host: m[1].replace(/^\[|\]$/g, ''), port };
  });
}

/**
 * The URL variable of a Redis topology (URL, sentinels, cluster nodes) reports the topology as a
 * whole: more than one of the three set, or none when `none` says so, is one problem, named once.
 * The URL itself may carry a password, so no reason ever quotes it.
 */
function topologyUrl(
  variables: readonly [string, string, string],
  description: string,
  several: string,
  none?: string,
): VarSpec<string | undefined> {
  return {
    description,
    secret: true,
    parse(raw, _appEnv, env = {}) {
      const set = variables.filter((name, i) => isSet(i === 0 ? raw : env[name]));
      if (set.length === 0 && none !== undefined) throw new Error(none);
      if (set.length > 1) throw new Error(`${several} ${variables.join(', ')} (got ${set.join(' and ')})`);
      if (!isSet(raw)) return undefined;
      parseUrl(raw.trim(), ['redis', 'rediss']);
      return raw.trim();
    },
  };
}

function hostPorts(description: string): VarSpec<HostPort[] | undefined> {
  return { description, parse: (raw) => (isSet(raw) ? parseHostPorts(raw) : undefined) };
}

/**
 * The token cache's own Redis (an evicting policy such as allkeys-lru), apart from the state
 * Redis of REDIS_CONFIG (noeviction: limiter windows, sign-in counters, revocation tombstones). Unset, the
 * cache shares the state Redis: correct, since noeviction never evicts, but then the cache's keys
 * count against the state Redis's memory.
 */
export const REDIS_CACHE_CONFIG = {
  REDIS_CACHE_URL: topologyUrl(
    ['REDIS_CACHE_URL', 'REDIS_CACHE_SENTINELS', 'REDIS_CACHE_CLUSTER_NODES'],
    'Redis connection URL of the token cache (single server); or REDIS_CACHE_SENTINELS, or REDIS_CACHE_CLUSTER_NODES; none: the state Redis',
    'is one of several cache Redis topologies: set at most one of',
  ),
  REDIS_CACHE_SENTINELS: hostPorts('Sentinel addresses of the cache Redis; instead of REDIS_CACHE_URL'),
  REDIS_CACHE_SENTINEL_MASTER: str('master group name the cache Redis sentinels watch', {
    default: 'mymaster',
  }),
  REDIS_CACHE_CLUSTER_NODES: hostPorts(
    'Redis Cluster seed nodes of the cache Redis; instead of REDIS_CACHE_URL',
  ),
  REDIS_CACHE_PASSWORD: {
    ...optionalStr(
      'password of the cache Redis nodes behind REDIS_CACHE_SENTINELS or REDIS_CACHE_CLUSTER_NODES',
    ),
    secret: true,
  },
} satisfies ConfigSpec;

export const REDIS_CONFIG = {
  REDIS_URL: topologyUrl(
    ['REDIS_URL', 'REDIS_SENTINELS', 'REDIS_CLUSTER_NODES'],
    'Redis connection URL (single server); or REDIS_SENTINELS, or REDIS_CLUSTER_NODES (exactly one)',
    'is one of several Redis topologies: set exactly one of',
    'is required, or REDIS_SENTINELS or REDIS_CLUSTER_NODES (exactly one of them)',
  ),
  REDIS_SENTINELS: hostPorts('Sentinel addresses (comma-separated host:port); instead of REDIS_URL'),
  REDIS_SENTINEL_MASTER: str('master group name the sentinels watch', { default: 'mymaster' }),
  REDIS_CLUSTER_NODES: hostPorts(
    'Redis Cluster seed nodes (comma-separated host:port); instead of REDIS_URL',
  ),
  REDIS_PASSWORD: {
    ...optionalStr('password of the Redis nodes behind REDIS_SENTINELS or REDIS_CLUSTER_NODES'),
    secret: true,
  },
  REDIS_KEY_PREFIX: {
    description: 'prefix of every Redis key (isolates environments sharing one Redis)',
    parse(raw) {
      const value = raw?.trim() ?? '';
      // Redis Cluster hashes the first {...} of a key: a brace in the prefix would put every key
      // of the environment in one slot, or split the hash tags the keys rely on.
      if (/[{}]/.test(value)) throw new Error('must not contain { or } (Redis Cluster hash tags)');
      return value;
    },
  } satisfies VarSpec<string>,
  ...REDIS_CACHE_CONFIG,
} satisfies ConfigSpec;

export const AMQP_CONFIG = {
  AMQP_URL: connectionUrl('RabbitMQ connection URL (the vhost isolates environments)', ['amqp', 'amqps']),
  AMQP_PREFETCH: int('unacknowledged messages per consumer', { default: '20', min: 1, max: 1000 }),
  // Below the 3 s within which every answer, a 503 included, must be given (the fault matrix,
  // test/faults): a request that waits on one RPC (a token check on a cache miss, a partner's
  // credentials) still answers in time when the other side never does.
  RPC_TIMEOUT_MS: int('how long an app waits for another app to answer over RPC', {
    default: '2000',
    min: 100,
  }),
} satisfies ConfigSpec;

/**
 * Variables of an app with a transactional outbox (OutboxModule). Published messages are kept a
 * while as an audit trail and for replaying by hand, then pruned; unpublished ones never are.
 */
export const OUTBOX_CONFIG = {
  OUTBOX_RETENTION_DAYS: int(
    'days a published outbox message is kept before it is pruned; 0 keeps them all',
    { default: '7', min: 0, max: 3650 },
  ),
} satisfies ConfigSpec;

export function loadConfig<S extends ConfigSpec>(spec: S, env: NodeJS.ProcessEnv): ConfigOf<S> {
  const problems: { variable: string; reason: string }[] = [];
  // Anything but an explicit `sandbox` is judged by production's rules (an unknown value is also
  // reported by APP_ENV's own check).
  const appEnv: AppEnv = env.APP_ENV?.trim() === 'sandbox' ? 'sandbox' : 'production';
  const out: Record<string, unknown> = {};
  for (const [name, varSpec] of Object.entries(spec)) {
    try {
      out[name] = varSpec.parse(env[name], appEnv, env);
    } catch (err) {
      problems.push({ variable: name, reason: err instanceof Error ? err.message : String(err) });
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return out as ConfigOf<S>;
}
