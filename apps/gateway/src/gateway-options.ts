import { isIP } from 'node:net';
import { DEFAULT_PORTS, type NestAppName } from '@svc/contracts';
import {
  BASE_CONFIG,
  CLIENT_IPV6_PREFIX,
  int,
  loadConfig,
  variable,
  type ConfigOf,
  type Defaults,
  type VarSpec,
} from '@svc/platform';

export type GatewayEnv = Readonly<Record<string, string | undefined>>;

type UpstreamVariable = Extract<keyof typeof GATEWAY_CONFIG, `${string}_UPSTREAMS`>;

/** Every app's replicas, as the gateway proxies to each of them: `<APP>_UPSTREAMS`. */
export function upstreamEnvName(app: NestAppName): UpstreamVariable {
  return `${app.toUpperCase().replace(/-/g, '_')}_UPSTREAMS` as UpstreamVariable;
}

const HOST_NAME =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;
const IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;
const IPV6 = /^[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*$/;

const refuse = (reason: string, raw: string): never => {
  throw new Error(`${reason} (got ${JSON.stringify(raw)})`);
};

/** A comma-separated list, each entry checked by `ok`; `what` names the entries in the error. */
function list(what: string, ok: (entry: string) => boolean) {
  return (raw: string): string[] => {
    const entries = raw.split(',').map((entry) => entry.trim());
    for (const [i, entry] of entries.entries()) {
      if (!ok(entry))
        refuse(`must be a comma-separated list of ${what} (bad entry ${JSON.stringify(entry)})`, raw);
      if (entries.indexOf(entry) < i) throw new Error(`lists ${JSON.stringify(entry)} twice`);
    }
    return entries;
  };
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

/** nginx's set_real_ip_from: an IPv4 or IPv6 address, or a CIDR range of one. */
function isAddressOrRange(entry: string): boolean {
  const [address, prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  return (
    family !== 0 &&
    rest.length === 0 &&
    (prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128)))
  );
}

/** An http(s) URL without a trailing slash, safe inside nginx strings (`$` is a variable there). */
function httpUrl(raw: string): string {
  if (!URL.canParse(raw)) refuse('must be an absolute http(s) URL', raw);
  const url = new URL(raw);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') refuse('must be an http or https URL', raw);
  if (url.search || url.hash || raw.includes('?') || raw.includes('#'))
    refuse('must not carry a query or fragment', raw);
  if (!/^[A-Za-z0-9._~:/@!&'()*+,;=%-]+$/.test(raw)) refuse('contains characters that are not allowed', raw);
  return raw.replace(/\/+$/, '');
}

/** nginx time values: `500ms`, `2s`, `1m`, `1h`, or bare seconds. */
function nginxTime(description: string, d: Defaults, check: (ms: number) => void = () => undefined) {
  return variable(description, d, (raw) => {
    const match = /^(\d{1,7})(ms|s|m|h)?$/.exec(raw);
    const unitMs = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;
    const ms = match ? Number(match[1]) * unitMs[(match[2] ?? 's') as keyof typeof unitMs] : NaN;
    if (!(ms > 0)) refuse('must be a positive duration such as 500ms, 2s or 1m', raw);
    check(ms);
    return ms;
  });
}

/**
 * Abuse limits per client address (nginx limit_req): production's stop a flood, never a person;
 * the sandbox's admit a partner's automated suite yet end a flood of scrypt sign-ins.
 */
function requestRate(description: string, d: Defaults): VarSpec<string> {
  return variable(description, d, (raw) =>
    /^[1-9]\d{0,5}r\/[sm]$/.test(raw) ? raw : refuse('must be a rate such as 10r/s or 30r/m', raw),
  );
}
const burst = (of: string, d: Defaults) => int(`burst of \`${of}\``, { ...d, min: 0, max: 999_999 });

const upstreams = (app: NestAppName) =>
  variable(
    `${app} replicas, a comma-separated \`host:port\` list`,
    { default: `127.0.0.1:${DEFAULT_PORTS[app]}` },
    list('host:port entries', isHostPort),
  );

const PUBLIC_BASE_URL = variable(
  BASE_CONFIG.PUBLIC_BASE_URL.description,
  { sandboxDefault: `http://localhost:${DEFAULT_PORTS.gateway}` },
  httpUrl,
);

/** What the generator reads, validated as the apps' config is; without APP_ENV, /internal/* is never routed. */
export const GATEWAY_CONFIG = {
  APP_ENV: BASE_CONFIG.APP_ENV,
  PUBLIC_BASE_URL,
  // The gateway serves the docs itself, so by default Problem types point at its own /docs.
  DOCS_URL: {
    ...BASE_CONFIG.DOCS_URL,
    parse(raw, appEnv, env = {}) {
      if (raw?.trim()) return httpUrl(raw.trim());
      if (!env.PUBLIC_BASE_URL?.trim() && appEnv === 'production')
        throw new Error('is required (or set PUBLIC_BASE_URL)');
      return `${PUBLIC_BASE_URL.parse(env.PUBLIC_BASE_URL, appEnv)}/docs`;
    },
  } satisfies VarSpec<string>,
  GATEWAY_PORT: int('port the gateway listens on (`npm start` reads it too)', {
    default: String(DEFAULT_PORTS.gateway),
    min: 1,
    max: 65535,
  }),
  GATEWAY_LISTEN_HOST: variable(
    'address the gateway listens on: IPv4, IPv6 or a host name',
    { default: '0.0.0.0' },
    (raw) => {
      // As nginx's `listen` wants it: IPv6 in brackets.
      if (IPV4.test(raw) || HOST_NAME.test(raw)) return raw;
      const bare = raw.startsWith('[') && raw.endsWith(']') ? raw.slice(1, -1) : raw;
      return IPV6.test(bare)
        ? `[${bare}]`
        : refuse('must be an IPv4 address, an IPv6 address or a host name', raw);
    },
  ),
  AUTH_SERVER_UPSTREAMS: upstreams('auth-server'),
  CONSENT_UI_UPSTREAMS: upstreams('consent-ui'),
  CREW_API_UPSTREAMS: upstreams('crew-api'),
  SPONSORSHIP_API_UPSTREAMS: upstreams('sponsorship-api'),
  WEBHOOK_DISPATCHER_UPSTREAMS: upstreams('webhook-dispatcher'),
  GATEWAY_UPSTREAM_CONNECT_TIMEOUT: nginxTime(
    'connecting to a replica (at most 75s, an nginx limit)',
    { default: '2s' },
    // The kernel's SYN retries end about there anyway.
    (ms) => {
      if (ms > 75_000) throw new Error('must not exceed 75s (an nginx limit)');
    },
  ),
  GATEWAY_UPSTREAM_READ_TIMEOUT: nginxTime('waiting for a replica’s answer', { default: '15s' }),
  GATEWAY_UPSTREAM_FAIL_TIMEOUT: nginxTime(
    'a replica that failed is left out this long; whole seconds, at most the apps’ `SHUTDOWN_DELAY_MS`',
    { default: '1s' },
    // nginx's fail_timeout: at most SHUTDOWN_DELAY_MS, so a rolling restart finds the last replica back.
    (ms) => {
      if (ms % 1000 !== 0) throw new Error('must be whole seconds, such as 1s or 5s');
    },
  ),
  GATEWAY_WORKER_PROCESSES: variable('nginx worker processes: `auto` or 1–999', { default: 'auto' }, (raw) =>
    raw === 'auto'
      ? ('auto' as const)
      : /^[1-9]\d{0,2}$/.test(raw)
        ? Number(raw)
        : refuse('must be "auto" or an integer from 1 to 999', raw),
  ),
  GATEWAY_TRUSTED_PROXIES: variable(
    'addresses or CIDR ranges of the load balancers in front of the gateway (`10.0.0.0/8,192.168.1.7`), whose `X-Forwarded-For` is believed; empty: the client is the connecting address',
    { default: '' },
    (raw) => {
      if (raw === '') return [];
      const entries = raw.split(',').map((entry) => entry.trim());
      for (const entry of entries)
        if (!isAddressOrRange(entry))
          refuse(
            `must be a comma-separated list of IP addresses or CIDR ranges (bad entry ${JSON.stringify(entry)})`,
            raw,
          );
      return [...new Set(entries)];
    },
  ),
  GATEWAY_METRICS_SYSLOG: {
    description:
      '`host:port` (IPv4 address) of the access-log metrics exporter that nginx sends one short line per request to, over syslog (UDP): method, area (/v1, /oauth or other), status, answer time; empty: none',
    default: '',
    parse(raw: string | undefined): string | undefined {
      const value = (raw ?? '').trim();
      if (value === '') return undefined;
      if (isHostPort(value) && IPV4.test(value.split(':')[0])) return value;
      return refuse('must be an IPv4 address and a port, such as 127.0.0.1:5531', value);
    },
  } satisfies VarSpec<string | undefined>,
  GATEWAY_LOGIN_RATE: requestRate(
    '`POST /login` per client address (nginx `limit_req`); beyond rate and burst a 429 page with `Retry-After`',
    { default: '30r/m', sandboxDefault: '20r/s' },
  ),
  GATEWAY_LOGIN_BURST: burst('GATEWAY_LOGIN_RATE', { default: '20', sandboxDefault: '200' }),
  GATEWAY_OAUTH_RATE: requestRate(
    '`/oauth/token` and `/oauth/revoke` per client address; then 429 with `Retry-After`',
    { default: '20r/s', sandboxDefault: '200r/s' },
  ),
  GATEWAY_OAUTH_BURST: burst('GATEWAY_OAUTH_RATE', { default: '100', sandboxDefault: '1000' }),
  CLIENT_IPV6_PREFIX,
};

/** Everything the renderer needs besides the route table, validated. */
export type GatewayOptions = ConfigOf<typeof GATEWAY_CONFIG>;

/** Reads and validates the gateway's environment; a ConfigError names every bad variable. */
export function gatewayOptionsFromEnv(env: GatewayEnv): GatewayOptions {
  return loadConfig(GATEWAY_CONFIG, env);
}

/** Seconds until one more request fits a rate: what a refusal's Retry-After says. */
export function rateRetryAfterSeconds(rate: string): number {
  const [count, unit] = rate.split('r/');
  return unit === 's' ? 1 : Math.max(1, Math.ceil(60 / Number(count)));
}
