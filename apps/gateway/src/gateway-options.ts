import { isIP } from 'node:net';
import { DEFAULT_PORTS, type NestAppName } from '@svc/contracts';

/** The apps the gateway proxies to; each has an `<APP>_UPSTREAMS` variable. */
export const UPSTREAM_APPS = ['auth-server', 'consent-ui', 'crew-api', 'sponsorship-api'] as const;
export type UpstreamApp = (typeof UPSTREAM_APPS)[number] & NestAppName;

type AppEnv = 'sandbox' | 'production';

/** Everything the renderer needs besides the route table. Values are already validated. */
export interface GatewayOptions {
  readonly appEnv: AppEnv;
  /** As nginx's `listen` wants it: an IPv4 address, a host name, or a bracketed IPv6 address. */
  readonly listenHost: string;
  readonly port: number;
  /** PUBLIC_BASE_URL without a trailing slash: the server of the API description. */
  readonly publicBaseUrl: string;
  /** Base of every Problem `type`, without a trailing slash; default `{PUBLIC_BASE_URL}/docs`. */
  readonly docsUrl: string;
  /** `host:port` entries per app, at least one each. */
  readonly upstreams: Readonly<Record<UpstreamApp, readonly string[]>>;
  readonly connectTimeoutMs: number;
  readonly readTimeoutMs: number;
  /**
   * How long a replica that failed is left out (nginx's fail_timeout). Keep it at most the apps'
   * SHUTDOWN_DELAY_MS: a rolling restart stops the next replica only after that delay, by when the
   * gateway has taken the restarted one back.
   */
  readonly failTimeoutMs: number;
  readonly workerProcesses: number | 'auto';
  /**
   * Addresses or CIDR ranges of the proxies in front of the gateway (a cloud load balancer) whose
   * X-Forwarded-For is believed; empty: none, the connecting address is the client's.
   */
  readonly trustedProxies: readonly string[];
  /** Abuse limits per client address (nginx limit_req): POST /login, and /oauth/token + /oauth/revoke. */
  readonly loginLimit: RequestLimit;
  readonly oauthLimit: RequestLimit;
}

/** An nginx limit_req rate (`10r/s`, `30r/m`) and the burst admitted beyond it without delay. */
interface RequestLimit {
  readonly rate: string;
  readonly burst: number;
}

/**
 * Default limits. Production: no person at a browser or partner server reaches them; a flood from
 * one address does. Sandbox: a partner's automated test suite (or a conformance checker) runs code
 * flows from one address far faster than a person, thousands of requests a minute; it must never be
 * refused. They still end a flood that would take the sandbox's CPU (each sign-in is a scrypt).
 */
const DEFAULT_LIMITS: Readonly<Record<AppEnv, { login: RequestLimit; oauth: RequestLimit }>> = {
  production: { login: { rate: '30r/m', burst: 20 }, oauth: { rate: '20r/s', burst: 100 } },
  sandbox: { login: { rate: '20r/s', burst: 200 }, oauth: { rate: '200r/s', burst: 1000 } },
};

export type GatewayEnv = Readonly<Record<string, string | undefined>>;

/** A bad environment value; `variable` names it so the operator knows what to fix. */
export class GatewayConfigError extends Error {
  constructor(
    readonly variable: string,
    reason: string,
  ) {
    super(`${variable} ${reason}`);
    this.name = 'GatewayConfigError';
  }
}

/** A GatewayConfigError that quotes the bad value. */
function invalid(variable: string, reason: string, raw: string): GatewayConfigError {
  return new GatewayConfigError(variable, `${reason} (got ${JSON.stringify(raw)})`);
}

/** A GatewayConfigError for one bad entry of a comma-separated list of `what`. */
function badEntry(variable: string, what: string, entry: string, raw: string): GatewayConfigError {
  return new GatewayConfigError(
    variable,
    `must be a comma-separated list of ${what} (bad entry ${JSON.stringify(entry)} in ${JSON.stringify(raw)})`,
  );
}

export function upstreamEnvName(app: UpstreamApp): string {
  return `${app.toUpperCase().replace(/-/g, '_')}_UPSTREAMS`;
}

const HOST_NAME =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;
const IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;
const IPV6 = /^[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*$/;

/**
 * Reads and validates the gateway's environment. Unset or empty variables take their defaults;
 * any other bad value throws a GatewayConfigError naming the variable.
 */
export function gatewayOptionsFromEnv(env: GatewayEnv): GatewayOptions {
  const get = (name: string): string | undefined => env[name]?.trim() || undefined;

  // Safe by default, as the apps: without APP_ENV the gateway never routes /internal/*.
  const appEnvRaw = get('APP_ENV') ?? 'production';
  if (appEnvRaw !== 'sandbox' && appEnvRaw !== 'production') {
    throw invalid('APP_ENV', 'must be "sandbox" or "production"', appEnvRaw);
  }

  const port = parsePort('GATEWAY_PORT', get('GATEWAY_PORT') ?? String(DEFAULT_PORTS.gateway));
  const listenHost = parseListenHost(get('GATEWAY_LISTEN_HOST') ?? '0.0.0.0');
  // As the apps read it (libs/platform config): a sandbox default, required in production.
  const rawBase =
    get('PUBLIC_BASE_URL') ??
    (appEnvRaw === 'sandbox' ? `http://localhost:${DEFAULT_PORTS.gateway}` : undefined);
  if (rawBase === undefined) throw new GatewayConfigError('PUBLIC_BASE_URL', 'is required in production');
  const publicBaseUrl = parseHttpUrl('PUBLIC_BASE_URL', rawBase);
  // The gateway serves the docs itself, so by default Problem types point at its own /docs.
  const docsUrl = parseHttpUrl('DOCS_URL', get('DOCS_URL') ?? `${publicBaseUrl}/docs`);

  const upstreams = {} as Record<UpstreamApp, readonly string[]>;
  for (const app of UPSTREAM_APPS) {
    const name = upstreamEnvName(app);
    upstreams[app] = parseUpstreamList(name, get(name) ?? `127.0.0.1:${DEFAULT_PORTS[app]}`);
  }

  const connectTimeoutMs = parseDuration(
    'GATEWAY_UPSTREAM_CONNECT_TIMEOUT',
    get('GATEWAY_UPSTREAM_CONNECT_TIMEOUT') ?? '2s',
  );
  // nginx refuses connect timeouts above 75 s (the kernel's SYN retries end about there anyway).
  if (connectTimeoutMs > 75_000) {
    throw new GatewayConfigError('GATEWAY_UPSTREAM_CONNECT_TIMEOUT', 'must not exceed 75s (an nginx limit)');
  }
  const readTimeoutMs = parseDuration(
    'GATEWAY_UPSTREAM_READ_TIMEOUT',
    get('GATEWAY_UPSTREAM_READ_TIMEOUT') ?? '15s',
  );

  const failTimeoutMs = parseDuration(
    'GATEWAY_UPSTREAM_FAIL_TIMEOUT',
    get('GATEWAY_UPSTREAM_FAIL_TIMEOUT') ?? '1s',
  );
  // nginx reads fail_timeout in whole seconds.
  if (failTimeoutMs % 1000 !== 0) {
    throw new GatewayConfigError('GATEWAY_UPSTREAM_FAIL_TIMEOUT', 'must be whole seconds, such as 1s or 5s');
  }

  const workersRaw = get('GATEWAY_WORKER_PROCESSES') ?? 'auto';
  if (workersRaw !== 'auto' && !/^[1-9]\d{0,2}$/.test(workersRaw)) {
    throw invalid('GATEWAY_WORKER_PROCESSES', 'must be "auto" or an integer from 1 to 999', workersRaw);
  }
  const workerProcesses = workersRaw === 'auto' ? 'auto' : Number(workersRaw);

  const trustedProxies = parseTrustedProxies(get('GATEWAY_TRUSTED_PROXIES') ?? '');

  const { login: loginDefault, oauth: oauthDefault } = DEFAULT_LIMITS[appEnvRaw];
  const loginLimit = {
    rate: parseRate('GATEWAY_LOGIN_RATE', get('GATEWAY_LOGIN_RATE') ?? loginDefault.rate),
    burst: parseBurst('GATEWAY_LOGIN_BURST', get('GATEWAY_LOGIN_BURST') ?? String(loginDefault.burst)),
  };
  const oauthLimit = {
    rate: parseRate('GATEWAY_OAUTH_RATE', get('GATEWAY_OAUTH_RATE') ?? oauthDefault.rate),
    burst: parseBurst('GATEWAY_OAUTH_BURST', get('GATEWAY_OAUTH_BURST') ?? String(oauthDefault.burst)),
  };

  return {
    appEnv: appEnvRaw,
    listenHost,
    port,
    publicBaseUrl,
    docsUrl,
    upstreams,
    connectTimeoutMs,
    readTimeoutMs,
    failTimeoutMs,
    workerProcesses,
    trustedProxies,
    loginLimit,
    oauthLimit,
  };
}

/** `GATEWAY_TRUSTED_PROXIES`: comma-separated IPv4/IPv6 addresses or CIDR ranges (nginx's set_real_ip_from). */
function parseTrustedProxies(raw: string): string[] {
  if (raw === '') return [];
  const entries = raw.split(',').map((entry) => entry.trim());
  for (const entry of entries) {
    const [address, prefix, ...rest] = entry.split('/');
    const family = isIP(address);
    const ok =
      family !== 0 &&
      rest.length === 0 &&
      (prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128)));
    if (!ok) throw badEntry('GATEWAY_TRUSTED_PROXIES', 'IP addresses or CIDR ranges', entry, raw);
  }
  return [...new Set(entries)];
}

function parsePort(variable: string, raw: string): number {
  const port = /^\d{1,5}$/.test(raw) ? Number(raw) : NaN;
  if (!(port >= 1 && port <= 65535)) throw invalid(variable, 'must be an integer from 1 to 65535', raw);
  return port;
}

function parseListenHost(raw: string): string {
  if (IPV4.test(raw) || HOST_NAME.test(raw)) return raw;
  const bare = raw.startsWith('[') && raw.endsWith(']') ? raw.slice(1, -1) : raw;
  if (IPV6.test(bare)) return `[${bare}]`;
  throw invalid('GATEWAY_LISTEN_HOST', 'must be an IPv4 address, an IPv6 address or a host name', raw);
}

function parseHttpUrl(variable: string, raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid(variable, 'must be an absolute http(s) URL', raw);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw invalid(variable, 'must be an http or https URL', raw);
  }
  if (url.search || url.hash || raw.includes('?') || raw.includes('#')) {
    throw invalid(variable, 'must not carry a query or fragment', raw);
  }
  // The URL lands inside nginx strings and JSON bodies; `$` would be read by nginx as a variable.
  if (!/^[A-Za-z0-9._~:/@!&'()*+,;=%-]+$/.test(raw)) {
    throw invalid(variable, 'contains characters that are not allowed', raw);
  }
  return raw.replace(/\/+$/, '');
}

function parseUpstreamList(variable: string, raw: string): string[] {
  const entries = raw.split(',').map((entry) => entry.trim());
  for (const [i, entry] of entries.entries()) {
    if (!isHostPort(entry)) throw badEntry(variable, 'host:port entries', entry, raw);
    if (entries.indexOf(entry) < i) {
      throw new GatewayConfigError(variable, `lists ${JSON.stringify(entry)} twice`);
    }
  }
  return entries;
}

function isHostPort(entry: string): boolean {
  const match = /^(\[[0-9A-Fa-f:.]+\]|[^:[\]]+):(\d{1,5})$/.exec(entry);
  if (!match) return false;
  const [, host, portText] = match;
  const port = Number(portText);
  if (!(port >= 1 && port <= 65535)) return false;
  if (host.startsWith('[')) return IPV6.test(host.slice(1, -1));
  return IPV4.test(host) || HOST_NAME.test(host);
}

/** nginx time values this gateway accepts: `500ms`, `2s`, `1m`, `1h`, or bare seconds. */
function parseDuration(variable: string, raw: string): number {
  const match = /^(\d{1,7})(ms|s|m|h)?$/.exec(raw);
  const unitMs = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;
  const ms = match ? Number(match[1]) * unitMs[(match[2] ?? 's') as keyof typeof unitMs] : NaN;
  if (!(ms > 0)) throw invalid(variable, 'must be a positive duration such as 500ms, 2s or 1m', raw);
  return ms;
}

/** nginx limit_req rates: requests per second or per minute. */
function parseRate(variable: string, raw: string): string {
  if (!/^[1-9]\d{0,5}r\/[sm]$/.test(raw))
    throw invalid(variable, 'must be a rate such as 10r/s or 30r/m', raw);
  return raw;
}

function parseBurst(variable: string, raw: string): number {
  if (!/^\d{1,6}$/.test(raw)) throw invalid(variable, 'must be an integer from 0 to 999999', raw);
  return Number(raw);
}

/** Seconds until one more request fits a rate: what a refusal's Retry-After says. */
export function rateRetryAfterSeconds(rate: string): number {
  const [count, unit] = rate.split('r/');
  return unit === 's' ? 1 : Math.max(1, Math.ceil(60 / Number(count)));
}
