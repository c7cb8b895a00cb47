import {
  DEFAULT_BODY_LIMIT_BYTES,
  GATEWAY_OWN_PATHS,
  NEST_APPS,
  PROBLEMS,
  REQUEST_ID_NGINX_REGEX,
  problemType,
  type GatewayRoute,
  type NestAppName,
  type ProblemCode,
} from '@svc/contracts';
import { rateRetryAfterSeconds, upstreamEnvName, type GatewayOptions } from './gateway-options';

/** The gateway's nginx.conf from the route table (pure); its paths are relative to nginx's prefix (`-p <out>`). */
export function renderNginxConfig(routes: readonly GatewayRoute[], options: GatewayOptions): string {
  const active = routes.filter((route) => !route.sandboxOnly || options.APP_ENV === 'sandbox');
  checkRoutes(active);
  const apps = NEST_APPS.filter((app) => active.some((route) => route.app === app));

  return [
    ...header(options, active.length),
    'http {',
    ...indented([
      ...httpSettings(options),
      '',
      ...apps.flatMap((app) =>
        upstreamBlock(app, options[upstreamEnvName(app)], options.GATEWAY_UPSTREAM_FAIL_TIMEOUT),
      ),
      ...serverBlock(active, options),
    ]),
    '}',
    '',
  ].join('\n');
}

/** The nginx upstream name of an app (`crew-api` → `crew_api`). */
export function upstreamName(app: NestAppName): string {
  return app.replace(/-/g, '_');
}

/** The internal URI whose location renders the problem for an nginx status. */
export function errorLocation(status: number): string {
  return `/_gateway/errors/${status}`;
}

/** Every status nginx itself can answer with, as a Problem (a status without a code of its own takes the nearest code's status). */
const NGINX_ERRORS: readonly { status: number; code: ProblemCode; detail: string }[] = [
  { status: 400, code: 'bad_request', detail: 'The request is malformed.' },
  { status: 403, code: 'not_found', detail: 'Nothing is served at this path.' },
  { status: 404, code: 'not_found', detail: 'Nothing is served at this path.' },
  { status: 405, code: 'method_not_allowed', detail: 'This path answers GET and HEAD only.' },
  { status: 408, code: 'bad_request', detail: 'The request was not received in time.' },
  { status: 411, code: 'bad_request', detail: 'The request body needs a length.' },
  { status: 412, code: 'bad_request', detail: 'A precondition in the request headers does not hold.' },
  { status: 413, code: 'payload_too_large', detail: '' /* rendered from the route table */ },
  { status: 414, code: 'bad_request', detail: 'The request URI is too long.' },
  { status: 416, code: 'bad_request', detail: 'The requested range cannot be served.' },
  { status: 494, code: 'bad_request', detail: 'The request headers are too large.' },
  { status: 500, code: 'internal_error', detail: 'The gateway failed to handle the request.' },
  { status: 501, code: 'bad_request', detail: 'The request uses a transfer encoding that is not supported.' },
  { status: 502, code: 'bad_gateway', detail: 'The service behind this path is unavailable.' },
  { status: 503, code: 'service_unavailable', detail: 'The gateway cannot take the request now.' },
  { status: 504, code: 'gateway_timeout', detail: 'The service behind this path did not answer in time.' },
  { status: 505, code: 'bad_request', detail: 'The HTTP version is not supported.' },
];

/** The directories nginx writes temporary files to, relative to its prefix (bundle.ts creates them). */
export const NGINX_TEMP_DIRS = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'] as const;

/** Each status nginx can produce has its own internal location; `=<status>` where the Problem's differs. */
const ERROR_PAGES = NGINX_ERRORS.map(({ status, code }) => {
  const target = PROBLEMS[code].status;
  return `error_page ${status} ${target === status ? '' : `=${target} `}${errorLocation(status)};`;
});

const REQUEST_ID = '$svc_request_id';
const INSTANCE_PLACEHOLDER = '@@instance@@';
/** nginx's spelling of the variable inside a string, where `"` follows it. */
const REQUEST_ID_IN_STRING = '${svc_request_id}';

/** API answers are never a document: nothing may load or frame them (docs/architecture.md). */
export const API_CSP = "default-src 'none'; frame-ancestors 'none'";
/** The guides and error pages: the site's own stylesheet and images, no script at all. */
export const DOCS_CSP =
  "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
/**
 * The Redoc reference: its bundle, the description, its blob: search worker, data: icons and the
 * <style> elements styled-components writes (each found necessary by the docs-browser e2e test).
 */
export const REFERENCE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
  "connect-src 'self'; worker-src blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
export const HSTS = 'max-age=31536000; includeSubDomains';

/**
 * The add_header lines of a level: a location with an add_header of its own inherits none, so it
 * repeats them all. `csp` undefined (server level): an app's own policy wins, else API_CSP.
 */
function securityHeaders(options: GatewayOptions, csp?: string): string[] {
  return indented([
    `add_header X-Request-Id ${REQUEST_ID} always;`,
    `add_header Content-Security-Policy ${csp === undefined ? '$svc_csp' : nginxDoubleQuoted(csp)} always;`,
    'add_header X-Content-Type-Options $svc_nosniff always;',
    'add_header Referrer-Policy $svc_referrer_policy always;',
    ...(options.APP_ENV === 'production'
      ? [`add_header Strict-Transport-Security ${nginxDoubleQuoted(HSTS)} always;`]
      : []),
  ]);
}

/** An app's own security header (consent-ui's pages) wins; nginx skips an add_header whose value is empty. */
const SECURITY_MAPS = [
  "# Security headers: an app's own value wins, else the gateway's (empty: not added twice).",
  ...map('$upstream_http_content_security_policy', '$svc_csp', {
    '""': nginxDoubleQuoted(API_CSP),
    default: '""',
  }),
  ...map('$upstream_http_x_content_type_options', '$svc_nosniff', { '""': 'nosniff', default: '""' }),
  ...map('$upstream_http_referrer_policy', '$svc_referrer_policy', { '""': 'no-referrer', default: '""' }),
  '',
];

/** The file's header comment and nginx's main context. */
function header(options: GatewayOptions, routeCount: number): string[] {
  return [
    '# Generated by apps/gateway from GATEWAY_ROUTES in @svc/contracts. Do not edit this file:',
    '# change the route table or the environment and generate it again.',
    `# APP_ENV=${options.APP_ENV}, ${routeCount} routes.`,
    '# Run in the foreground: nginx -p <out> -c <out>/nginx.conf',
    '',
    'daemon off;',
    `worker_processes ${options.GATEWAY_WORKER_PROCESSES};`,
    'pid nginx.pid;',
    'lock_file nginx.lock;',
    'error_log stderr warn;',
    'pcre_jit on;',
    '',
    'events {',
    '    worker_connections 1024;',
    '}',
    '',
  ];
}

function httpSettings(options: GatewayOptions): string[] {
  const connect = nginxTime(options.GATEWAY_UPSTREAM_CONNECT_TIMEOUT);
  const read = nginxTime(options.GATEWAY_UPSTREAM_READ_TIMEOUT);
  return [
    'server_tokens off;',
    'sendfile on;',
    'tcp_nopush on;',
    'keepalive_timeout 65s;',
    'client_body_buffer_size 128k;',
    'reset_timedout_connection on;',
    '',
    '# Only what the gateway serves itself; proxied responses keep the type their app set.',
    'types {',
    '    application/json json;',
    '    application/yaml yaml yml;',
    '    text/html html;',
    '    text/css css;',
    '    text/javascript js mjs;',
    '    image/svg+xml svg;',
    '    image/png png;',
    '}',
    'default_type application/octet-stream;',
    '',
    '# Temporary files stay under the prefix, so nginx runs as any user and beside a system nginx.',
    ...NGINX_TEMP_DIRS.map((dir) => `${dir}_temp_path temp/${dir};`),
    '',
    '# docs/rules.md: an incoming X-Request-Id matching the rule is kept; anything else gets a fresh req_<hex>.',
    ...map('$http_x_request_id', REQUEST_ID, {
      [nginxDoubleQuoted(`~${REQUEST_ID_NGINX_REGEX}`)]: '$http_x_request_id',
      default: 'req_$request_id',
    }),
    '',
    '# The trace id of a W3C traceparent, for the access line: the apps log it as trace_id too.',
    ...map('$http_traceparent', '$svc_trace_id', {
      '"~^[0-9a-f]{2}-(?<svc_tid>[0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$"': '$svc_tid',
      default: '""',
    }),
    '',
    '# Host as the client sent it (with its port), for the apps and for X-Forwarded-Host.',
    ...map('$http_host', '$svc_host', { '""': '$host', default: '$http_host' }),
    '',
    '# A TLS-terminating load balancer in front says https; otherwise the scheme nginx saw.',
    ...map('$http_x_forwarded_proto', '$svc_forwarded_proto', {
      http: 'http',
      https: 'https',
      default: '$scheme',
    }),
    '',
    '# nginx matches locations on the normalised path but passes the raw one upstream. A raw path',
    '# with dot segments or an encoded dot or slash could match one route here and another in the',
    '# app (e.g. reach /internal/* through /v1/me/), so such paths are refused with a 400.',
    ...map('$request_uri', '$svc_unsafe_path', {
      '"~*^[^?]*(%2e|%2f|%5c|/\\.\\.?(/|\\?|$))"': '1',
      default: '0',
    }),
    '',
    ...SECURITY_MAPS,
    '# The path without the query string: queries can carry e-mail addresses, which stay out of logs.',
    ...map('$request_uri', '$svc_log_path', { '"~^(?<svc_path>[^?]*)"': '$svc_path', default: '""' }),
    '',
    '# One JSON line per request on stdout.',
    "log_format svc_json escape=json '{'",
    `    '"time":"$time_iso8601","request_id":"${REQUEST_ID}","remote_addr":"$remote_addr",'`,
    `    '"method":"$request_method","path":"$svc_log_path","status":$status,'`,
    `    '"body_bytes_sent":$body_bytes_sent,"request_length":$request_length,"request_time":$request_time,'`,
    `    '"upstream_addr":"$upstream_addr","upstream_status":"$upstream_status",'`,
    `    '"upstream_response_time":"$upstream_response_time","user_agent":"$http_user_agent",'`,
    `    '"trace_id":"$svc_trace_id","traceparent":"$http_traceparent"'`,
    "'}';",
    'access_log /dev/stdout svc_json;',
    '',
    ...metricsLogSettings(options.GATEWAY_METRICS_SYSLOG),
    ...realIpSettings(options.GATEWAY_TRUSTED_PROXIES),
    ...requestLimitSettings(options),
    '# Upstreams: HTTP/1.1 keep-alive pools; errors of the apps pass through untouched.',
    'proxy_http_version 1.1;',
    'proxy_set_header Connection "";',
    'proxy_set_header Host $svc_host;',
    'proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;',
    'proxy_set_header X-Forwarded-Proto $svc_forwarded_proto;',
    'proxy_set_header X-Forwarded-Host $svc_host;',
    `proxy_set_header X-Request-Id ${REQUEST_ID};`,
    'proxy_hide_header X-Request-Id;',
    "# The caller's trace context goes on to the app, whose request span continues it.",
    'proxy_set_header traceparent $http_traceparent;',
    'proxy_set_header tracestate $http_tracestate;',
    'proxy_intercept_errors off;',
    'proxy_redirect off;',
    `proxy_connect_timeout ${connect};`,
    `proxy_send_timeout ${read};`,
    `proxy_read_timeout ${read};`,
    '# Replicas: a request goes to the next replica when the connection is refused or breaks, times',
    '# out, or the answer is a 502 or 504 (an app never sends those itself), at most 3 tries in all',
    '# (one more for the backup pass, see the upstreams), never after a full read timeout. nginx sends a POST or PATCH again only when it was not',
    '# sent at all (connection refused): a non-idempotent request is never repeated. A 503 is an',
    "# app's own answer (a dependency it needs is down: the same for every replica) and passes",
    '# through: counted as a failure, it would take every replica out at once (max_fails) and turn',
    '# the app\'s Problem into the gateway\'s 502 "no live upstreams".',
    'proxy_next_upstream error timeout http_502 http_504;',
    'proxy_next_upstream_tries 3;',
    `proxy_next_upstream_timeout ${read};`,
    'proxy_buffer_size 16k;',
    'proxy_buffers 8 16k;',
    'proxy_busy_buffers_size 32k;',
  ];
}

/**
 * The exporter's line per request (the 502/504s nginx gives itself never reach the apps' metrics);
 * UDP, never waited for. Only the area, from $request_uri ($uri is the error page's by a 502).
 */
function metricsLogSettings(server: string | undefined): string[] {
  if (server === undefined) return [];
  return [
    '# GATEWAY_METRICS_SYSLOG: a short line per request to the metrics exporter (syslog over UDP).',
    ...map('$request_uri', '$svc_metrics_area', { '~^/v1/': 'v1', '~^/oauth/': 'oauth', default: 'other' }),
    `log_format svc_metrics '"$request_method $svc_metrics_area" $status $request_time';`,
    `access_log syslog:server=${server},tag=gateway,nohostname svc_metrics;`,
    '',
  ];
}

/** Behind trusted proxies the client is the last untrusted X-Forwarded-For entry, as the apps' rule says. */
function realIpSettings(trusted: readonly string[]): string[] {
  if (trusted.length === 0) {
    return ['# GATEWAY_TRUSTED_PROXIES is empty: the connecting address is the client.', ''];
  }
  return [
    '# GATEWAY_TRUSTED_PROXIES: the client is the last X-Forwarded-For address that is not one of these.',
    ...trusted.map((range) => `set_real_ip_from ${range};`),
    'real_ip_header X-Forwarded-For;',
    'real_ip_recursive on;',
    '',
  ];
}

/** Limited per client address, 429 before an app does expensive work; only POST /login counts. */
export const LIMITED_ROUTES: Readonly<Record<string, 'login' | 'oauth'>> = {
  '/login': 'login',
  '/oauth/token': 'oauth',
  '/oauth/revoke': 'oauth',
};

function requestLimitSettings(options: GatewayOptions): string[] {
  return [
    '# Abuse limits per client address (GATEWAY_LOGIN_RATE, GATEWAY_OAUTH_RATE): POST /login,',
    '# /oauth/token and /oauth/revoke; beyond rate + burst nginx answers 429 itself.',
    ...clientKeyMap(options.CLIENT_IPV6_PREFIX),
    ...map('$request_method', '$svc_login_limit_key', { POST: '$svc_client_key', default: '""' }),
    `limit_req_zone $svc_login_limit_key zone=svc_login:10m rate=${options.GATEWAY_LOGIN_RATE};`,
    `limit_req_zone $svc_client_key zone=svc_oauth:10m rate=${options.GATEWAY_OAUTH_RATE};`,
    'limit_req_status 429;',
    'limit_req_log_level warn;',
    '',
  ];
}

/**
 * The limit key as the apps' addressLimitKey cuts it: an IPv6 network's bytes marked `6`, a mapped
 * IPv4 as its 4 bytes, an IPv4 address whole. `(?s)`: any byte, newline too.
 */
function clientKeyMap(prefix: number): string[] {
  const kept = prefix / 8;
  return [
    `# IPv6 clients are limited by their /${prefix} (CLIENT_IPV6_PREFIX), IPv4 clients by their address.`,
    ...map('$binary_remote_addr', '$svc_client_key', {
      '"~^(?s)\\x00{10}\\xff\\xff(.{4})$"': '$1',
      [`"~^(?s)(.{${kept}}).{${16 - kept}}$"`]: '6$1',
      default: '$binary_remote_addr',
    }),
  ];
}

/** The internal location answering a limit_req refusal of one kind. */
export function limitErrorLocation(kind: 'login' | 'oauth'): string {
  return `/_gateway/errors/429-${kind}`;
}

function limitErrorLocations(options: GatewayOptions): string[] {
  // A location with add_header lines of its own inherits none: the security headers are repeated.
  const refusal = (kind: 'login' | 'oauth', type: string[], retryAfter: number, body: string) =>
    location(`= ${limitErrorLocation(kind)}`, [
      '    internal;',
      ...type,
      `    add_header Retry-After ${retryAfter} always;`,
      '    add_header Cache-Control no-store always;',
      ...securityHeaders(options),
      `    return 429 ${nginxSingleQuoted(body)};`,
    ]);
  // RFC 6749 §5.2 shape, as the auth-server's own 503s: temporarily_unavailable, now with 429.
  const oauth = JSON.stringify({
    error: 'temporarily_unavailable',
    error_description: 'Too many requests from this address. Retry after the time in Retry-After.',
  });
  const loginWait = rateRetryAfterSeconds(options.GATEWAY_LOGIN_RATE);
  // A browser's page, as consent-ui answers /login; the app's own 429 page is for one account.
  const login = [
    '<!doctype html><html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<title>Too many sign-in attempts</title></head><body><main>',
    '<h1>Too many sign-in attempts</h1>',
    `<p>Too many sign-in attempts came from your network. Wait ${loginWait === 1 ? 'a second' : `${loginWait} seconds`} and try again.</p>`,
    '</main></body></html>',
  ].join('');
  return [
    ...refusal(
      'oauth',
      ['    default_type application/json;'],
      rateRetryAfterSeconds(options.GATEWAY_OAUTH_RATE),
      oauth,
    ),
    ...refusal('login', ['    default_type text/html;', '    charset utf-8;'], loginWait, login),
  ];
}

function upstreamBlock(app: NestAppName, servers: readonly string[], failTimeoutMs: number): string[] {
  return [
    `upstream ${upstreamName(app)} {`,
    // A failed replica is left out for fail_timeout, short since nginx cannot see it come back.
    ...servers.map((server) => `    server ${server} max_fails=1 fail_timeout=${nginxTime(failTimeoutMs)};`),
    // The same servers as backups, never left out: while every primary entry is out (a rolling
    // restart), requests still reach the replica that serves, not a 502 "no live upstreams".
    ...(servers.length > 1 ? servers.map((server) => `    server ${server} backup max_fails=0;`) : []),
    '    keepalive 32;',
    // Below the apps' idle timeout (72 s): nginx never reuses a connection the app is closing.
    '    keepalive_timeout 30s;',
    '    keepalive_requests 1000;',
    '}',
    '',
  ];
}

function serverBlock(routes: readonly GatewayRoute[], options: GatewayOptions): string[] {
  return [
    'server {',
    `    listen ${options.GATEWAY_LISTEN_HOST}:${options.GATEWAY_PORT} default_server;`,
    '    server_name _;',
    '    # Location: /docs/ rather than http://<host>:<nginx port>/docs/, which is wrong behind a proxy.',
    '    absolute_redirect off;',
    `    client_max_body_size ${DEFAULT_BODY_LIMIT_BYTES};`,
    '',
    '    # On every response, errors and 304s included. A location with an add_header of its own',
    '    # must repeat these lines (nginx inherits add_header only into locations without any).',
    ...securityHeaders(options),
    '',
    ...indented(ERROR_PAGES),
    "    # Redirects (/docs → /docs/, a directory without its slash) without nginx's HTML body.",
    '    error_page 301 @bodyless_redirect;',
    '',
    ...indented([
      ...location('= /healthz', [
        '    access_log off;',
        '    if ($request_method !~ ^(GET|HEAD)$) {',
        '        return 405;',
        '    }',
        '    default_type application/json;',
        `    return 200 '{"status":"ok"}';`,
      ]),
      ...staticLocations(options),
      ...routes.flatMap((route) => routeLocations(route, options)),
      ...location('/', ['    return 404;']),
      ...errorLocations(routes, options),
      ...limitErrorLocations(options),
      'location @bodyless_redirect {',
      '    # The status stays 301 (error_page without "="); the Location header is kept.',
      '    default_type "";',
      "    return 200 '';",
      '}',
    ]),
    '}',
  ];
}

function staticLocations(options: GatewayOptions): string[] {
  // `expires epoch` makes clients revalidate (ETag → 304) so a newly built description shows at once;
  // `max_ranges 0` keeps nginx from answering 416 pages.
  const files = (selector: string, lines: string[] = [], headers: string[] = []) =>
    location(selector, ['    root html;', ...lines, '    expires epoch;', '    max_ranges 0;', ...headers]);
  const pages = (tryFiles: string) => [`    try_files ${tryFiles} =404;`, '    charset utf-8;'];
  return [
    ...files('= /openapi.json'),
    ...files('= /openapi.yaml'),
    ...location('= /docs', ['    return 301 /docs/$is_args$args;']),
    ...files(
      '^~ /docs/',
      [
        '    index index.html;',
        '    # Pages are addressed without ".html": a Problem `type` is {DOCS_URL}/errors/<code>.',
        ...pages('$uri $uri.html $uri/'),
      ],
      securityHeaders(options, DOCS_CSP),
    ),
    '# The Redoc reference runs a script bundle and a worker: a policy of its own.',
    ...files('= /docs/reference', pages('/docs/reference.html'), securityHeaders(options, REFERENCE_CSP)),
  ];
}

function routeLocations(route: GatewayRoute, options: GatewayOptions): string[] {
  const kind = LIMITED_ROUTES[route.path];
  const burst = kind === 'login' ? options.GATEWAY_LOGIN_BURST : options.GATEWAY_OAUTH_BURST;
  const limited = kind
    ? [
        `    limit_req zone=svc_${kind}${burst > 0 ? ` burst=${burst}` : ''} nodelay;`,
        // error_page here replaces the server's list (nginx inherits none into a location with its own).
        ...indented(ERROR_PAGES),
        `    error_page 429 ${limitErrorLocation(kind)};`,
      ]
    : [];
  const body = [
    ...limited,
    '    if ($svc_unsafe_path) {',
    '        return 400;',
    '    }',
    ...(route.bodyLimitBytes !== undefined ? [`    client_max_body_size ${route.bodyLimitBytes};`] : []),
    `    proxy_pass http://${upstreamName(route.app)};`,
  ];
  return [
    `# ${route.app}${route.sandboxOnly ? ' (sandbox only)' : ''}`,
    ...selectors(route).flatMap((selector) => location(selector, body)),
  ];
}

/** A prefix route answers at its path and below it. */
function selectors(route: GatewayRoute): string[] {
  return route.match === 'exact' ? [`= ${route.path}`] : [`= ${route.path}`, `^~ ${route.path}/`];
}

/** A location block and the blank line after it; `body` is already indented. */
function location(selector: string, body: readonly string[]): string[] {
  return [`location ${selector} {`, ...body, '}', ''];
}

function errorLocations(routes: readonly GatewayRoute[], options: GatewayOptions): string[] {
  return NGINX_ERRORS.flatMap(({ status, code, detail }) => {
    const problem = PROBLEMS[code];
    const body = JSON.stringify({
      type: problemType(options.DOCS_URL, code),
      title: problem.title,
      status: problem.status,
      detail: code === 'payload_too_large' ? bodyLimitDetail(routes) : detail,
      instance: INSTANCE_PLACEHOLDER,
    });
    // The request id needs no JSON escaping: the map only lets [A-Za-z0-9._:-] through, or req_<hex>.
    const text = nginxSingleQuoted(body).replace(`"${INSTANCE_PLACEHOLDER}"`, `"${REQUEST_ID_IN_STRING}"`);
    return location(`= ${errorLocation(status)}`, [
      '    internal;',
      // The redirect checks the body size again here: a large reconcile body would become an HTML 413.
      '    client_max_body_size 0;',
      '    default_type application/problem+json;',
      // nginx answers 405 only where a location allows GET and HEAD alone (/healthz, static files).
      ...(status === 405 ? ['    add_header Allow "GET, HEAD" always;'] : []),
      // An error is about one request: no cache keeps it (RFC 9111 §5.2.2.5).
      '    add_header Cache-Control "no-store" always;',
      ...securityHeaders(options),
      `    return ${problem.status} ${text};`,
    ]);
  });
}

function bodyLimitDetail(routes: readonly GatewayRoute[]): string {
  const limits = [formatBytes(DEFAULT_BODY_LIMIT_BYTES)];
  for (const { path, bodyLimitBytes = DEFAULT_BODY_LIMIT_BYTES } of routes) {
    if (bodyLimitBytes !== DEFAULT_BODY_LIMIT_BYTES) limits.push(`${formatBytes(bodyLimitBytes)} on ${path}`);
  }
  return `The request body is larger than this endpoint accepts (${limits.join('; ')}).`;
}

function formatBytes(bytes: number): string {
  const mib = 1024 * 1024;
  return bytes % mib === 0 ? `${bytes / mib} MiB` : `${bytes} bytes`;
}

/** nginx time syntax for a duration in milliseconds. */
function nginxTime(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

/** A literal nginx string in single quotes; `$` is refused because nginx would read a variable. */
function nginxSingleQuoted(text: string): string {
  if (text.includes('$')) throw new Error(`"$" cannot appear in a literal nginx string: ${text}`);
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

function nginxDoubleQuoted(text: string): string {
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** An nginx map: `target` is the value of the first entry (pattern → value) that `source` matches. */
function map(source: string, target: string, entries: Readonly<Record<string, string>>): string[] {
  return [`map ${source} ${target} {`, ...Object.entries(entries).map(([k, v]) => `    ${k} ${v};`), '}'];
}

/** Lines one level deeper; blank lines stay empty. */
function indented(lines: readonly string[]): string[] {
  return lines.map((line) => (line ? `    ${line}` : line));
}

const SAFE_PATH = /^(\/[A-Za-z0-9._~-]+)+$/;

/** The route table must make sense as nginx locations; a mistake fails generation, not nginx at 3 a.m. */
function checkRoutes(routes: readonly GatewayRoute[]): void {
  const seen = new Set<string>();
  for (const route of routes) {
    if (!SAFE_PATH.test(route.path) || /\/\.\.?(\/|$)/.test(route.path)) {
      throw new Error(`gateway route ${JSON.stringify(route.path)}: a path is "/" plus plain segments`);
    }
    if (!(NEST_APPS as readonly string[]).includes(route.app)) {
      throw new Error(`gateway route ${route.path}: app ${route.app} has no upstream in the gateway`);
    }
    const own = GATEWAY_OWN_PATHS.find(
      (path) => route.path === path || route.path.startsWith(`${path}/`) || path.startsWith(`${route.path}/`),
    );
    if (own || route.path.startsWith('/_gateway')) {
      throw new Error(
        `gateway route ${route.path} overlaps ${own ?? '/_gateway'}, which the gateway serves itself`,
      );
    }
    if (
      route.bodyLimitBytes !== undefined &&
      !(Number.isInteger(route.bodyLimitBytes) && route.bodyLimitBytes > 0)
    ) {
      throw new Error(`gateway route ${route.path}: bodyLimitBytes must be a positive integer`);
    }
    for (const selector of selectors(route)) {
      if (seen.has(selector)) throw new Error(`gateway route ${route.path} is listed twice (${selector})`);
      seen.add(selector);
    }
  }
}
