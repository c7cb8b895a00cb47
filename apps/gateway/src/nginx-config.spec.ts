import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ConfigError } from '@svc/platform';
import {
  DEFAULT_BODY_LIMIT_BYTES,
  DEFAULT_METRICS_PORTS,
  DEFAULT_PORTS,
  GATEWAY_ROUTES,
  NEST_APPS,
  PROBLEMS,
  REQUEST_ID_NGINX_REGEX,
  problemType,
  type GatewayRoute,
  type NestAppName,
  type ProblemCode,
} from '@svc/contracts';
import { nginxBinary } from '../../../test/support/nginx';
import { gatewayOptionsFromEnv, upstreamEnvName, type GatewayEnv } from './gateway-options';
import { main, type GenerateIo } from './generate';
import {
  API_CSP,
  DOCS_CSP,
  errorLocation,
  HSTS,
  LIMITED_ROUTES,
  limitErrorLocation,
  REFERENCE_CSP,
  renderNginxConfig,
  upstreamName,
} from './nginx-config';

const render = (env: GatewayEnv = {}, routes: readonly GatewayRoute[] = GATEWAY_ROUTES) =>
  renderNginxConfig(
    routes,
    gatewayOptionsFromEnv({ APP_ENV: 'sandbox', PUBLIC_BASE_URL: 'https://api.example.test', ...env }),
  );

/** The text of one `location <selector> { ... }` block, or undefined when there is none. */
function location(conf: string, selector: string): string | undefined {
  const open = `location ${selector} {`;
  const start = conf.indexOf(open);
  if (start < 0) return undefined;
  let depth = 0;
  for (let i = start + open.length - 1; i < conf.length; i++) {
    if (conf[i] === '{') depth++;
    if (conf[i] === '}' && --depth === 0) return conf.slice(start, i + 1);
  }
  throw new Error(`unbalanced block ${selector}`);
}

function count(text: string, fragment: string): number {
  return text.split(fragment).length - 1;
}

function selectors(route: GatewayRoute): string[] {
  return route.match === 'exact' ? [`= ${route.path}`] : [`= ${route.path}`, `^~ ${route.path}/`];
}

function upstreamBlock(conf: string, app: NestAppName): string {
  const match = new RegExp(`upstream ${upstreamName(app)} \\{[^}]*\\}`).exec(conf);
  if (!match) throw new Error(`no upstream block for ${app}`);
  return match[0];
}

/** The Problem an internal error location answers with, for a given request id. */
function problemAt(conf: string, status: number, requestId: string): { status: number; body: unknown } {
  const block = location(conf, `= ${errorLocation(status)}`);
  if (!block) throw new Error(`no error location for ${status}`);
  const match = /return (\d{3}) '(.*)';/.exec(block);
  if (!match) throw new Error(`no return in error location for ${status}`);
  return { status: Number(match[1]), body: JSON.parse(match[2].replace('${svc_request_id}', requestId)) };
}

describe('renderNginxConfig', () => {
  it('routes every GATEWAY_ROUTES entry to the upstream of its app (exact: "=", prefix: "=" and "^~ /p/")', () => {
    const conf = render();
    for (const route of GATEWAY_ROUTES) {
      for (const selector of selectors(route)) {
        expect(count(conf, `location ${selector} {`)).toBe(1);
        expect(location(conf, selector)).toContain(`proxy_pass http://${upstreamName(route.app)};`);
      }
    }
  });

  it('raises the body limit only on routes with bodyLimitBytes (reconcile: 5 MiB)', () => {
    const conf = render();
    expect(conf).toMatch(new RegExp(`server \\{[^]*?client_max_body_size ${DEFAULT_BODY_LIMIT_BYTES};`));
    const reconcile = GATEWAY_ROUTES.find((r) => r.path === '/v1/partners/sponsorships/reconcile');
    expect(reconcile?.bodyLimitBytes).toBe(5 * 1024 * 1024);
    for (const route of GATEWAY_ROUTES) {
      for (const selector of selectors(route)) {
        const block = location(conf, selector) ?? '';
        if (route.bodyLimitBytes) expect(block).toContain(`client_max_body_size ${route.bodyLimitBytes};`);
        else expect(block).not.toContain('client_max_body_size');
      }
    }
  });

  it('routes sandboxOnly entries in sandbox only; production answers them with the 404 catch-all', () => {
    const sandboxOnly = GATEWAY_ROUTES.filter((r) => r.sandboxOnly);
    expect(sandboxOnly.map((r) => r.path)).toContain('/internal/v1');
    const sandbox = render({ APP_ENV: 'sandbox' });
    const production = render({ APP_ENV: 'production' });
    for (const route of sandboxOnly) {
      for (const selector of selectors(route)) {
        expect(location(sandbox, selector)).toBeDefined();
        expect(location(production, selector)).toBeUndefined();
      }
    }
    for (const route of GATEWAY_ROUTES.filter((r) => !r.sandboxOnly)) {
      for (const selector of selectors(route)) expect(location(production, selector)).toBeDefined();
    }
    expect(location(production, '/')).toContain('return 404;');
  });

  it('puts every server of <APP>_UPSTREAMS in a keep-alive upstream block, and defaults to the local ports', () => {
    const conf = render({ CREW_API_UPSTREAMS: '10.0.0.1:3002, crew-api-2.crew.svc:3012,[::1]:3022' });
    const crew = upstreamBlock(conf, 'crew-api');
    expect(crew.match(/^\s*server .*;$/gm)?.map((line) => line.trim())).toEqual([
      'server 10.0.0.1:3002 max_fails=1 fail_timeout=1s;',
      'server crew-api-2.crew.svc:3012 max_fails=1 fail_timeout=1s;',
      'server [::1]:3022 max_fails=1 fail_timeout=1s;',
      // The same servers as backups, never left out: used only while every one above is.
      'server 10.0.0.1:3002 backup max_fails=0;',
      'server crew-api-2.crew.svc:3012 backup max_fails=0;',
      'server [::1]:3022 backup max_fails=0;',
    ]);
    expect(crew).toMatch(/keepalive \d+;/);
    for (const app of NEST_APPS.filter((a) => a !== 'crew-api')) {
      expect(
        upstreamBlock(conf, app)
          .match(/^\s*server .*;$/gm)
          ?.map((l) => l.trim()),
      ).toEqual([`server 127.0.0.1:${DEFAULT_PORTS[app]} max_fails=1 fail_timeout=1s;`]);
    }
    // Keep-alive to upstreams needs HTTP/1.1 and no "Connection: close" from the client.
    expect(conf).toContain('proxy_http_version 1.1;');
    expect(conf).toContain('proxy_set_header Connection "";');
  });

  it('never routes /metrics nor proxies to a metrics port: Prometheus scrapes the apps directly', () => {
    for (const env of ['sandbox', 'production'] as const) {
      const conf = render({ APP_ENV: env });
      expect(conf).not.toMatch(/location[^{]*\/metrics/);
      for (const port of [9464, ...Object.values(DEFAULT_METRICS_PORTS)])
        expect(conf).not.toContain(`:${port}`);
    }
  });

  it('tries another replica on a broken connection, a timeout, a 502 or a 504, but passes an app’s 503 through', () => {
    const conf = render({ CREW_API_UPSTREAMS: '10.0.0.1:3002,10.0.0.2:3002' });
    expect(conf).toContain('proxy_next_upstream error timeout http_502 http_504;');
    expect(conf).toContain('proxy_next_upstream_tries 3;');
    expect(conf).toContain('proxy_next_upstream_timeout 15s;');
    // A POST or PATCH that reached an app is never sent again (nginx's default kept).
    expect(conf).not.toMatch(/proxy_next_upstream[^;]*non_idempotent/);
    expect(conf).not.toMatch(/proxy_next_upstream [^;]*http_503/);
    // The apps' own error bodies pass through; the gateway's Problem pages are for nginx's own errors.
    expect(conf).toContain('proxy_intercept_errors off;');
    expect(conf).not.toContain('proxy_intercept_errors on;');
  });

  it('trusts no proxy by default: no real_ip directives, the connecting address is the client', () => {
    const conf = render();
    expect(conf).not.toMatch(/set_real_ip_from|real_ip_header|real_ip_recursive/);
    expect(conf).toContain('proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;');
  });

  it('takes the client address from X-Forwarded-For behind GATEWAY_TRUSTED_PROXIES', () => {
    const conf = render({ GATEWAY_TRUSTED_PROXIES: '10.0.0.0/8, 192.168.1.7,2001:db8::/32 ,::1' });
    expect(conf.match(/^\s*set_real_ip_from .*;$/gm)?.map((line) => line.trim())).toEqual([
      'set_real_ip_from 10.0.0.0/8;',
      'set_real_ip_from 192.168.1.7;',
      'set_real_ip_from 2001:db8::/32;',
      'set_real_ip_from ::1;',
    ]);
    expect(count(conf, 'real_ip_header X-Forwarded-For;')).toBe(1);
    expect(count(conf, 'real_ip_recursive on;')).toBe(1);
    // Upstream, the last entry is then the real client (the apps' rule for the sign-in throttle).
    expect(conf).toContain('proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;');
  });

  it('sends a short access line per request to the metrics exporter only under GATEWAY_METRICS_SYSLOG', () => {
    expect(render()).not.toMatch(/syslog:|svc_metrics/);
    const conf = render({ GATEWAY_METRICS_SYSLOG: '127.0.0.1:5531' });
    expect(conf).toContain(
      'log_format svc_metrics \'"$request_method $svc_metrics_area" $status $request_time\';',
    );
    expect(count(conf, 'access_log syslog:server=127.0.0.1:5531,tag=gateway,nohostname svc_metrics;')).toBe(
      1,
    );
    // Beside the JSON line on stdout, not instead of it; no path or address goes to the exporter.
    expect(count(conf, 'access_log /dev/stdout svc_json;')).toBe(1);
    const area = /map \$request_uri \$svc_metrics_area \{\n([^]*?)\n {4}\}/.exec(conf)?.[1] ?? '';
    expect(area.split('\n').map((l) => l.trim())).toEqual([
      '~^/v1/ v1;',
      '~^/oauth/ oauth;',
      'default other;',
    ]);
  });

  it('keeps an X-Request-Id matching the contracts rule, else uses req_<hex>; sends it upstream and back once', () => {
    const conf = render();
    const map = /map \$http_x_request_id \$svc_request_id \{\n([^]*?)\n {4}\}/.exec(conf)?.[1] ?? '';
    expect(map).toContain(`"~${REQUEST_ID_NGINX_REGEX}" $http_x_request_id;`);
    expect(map).toContain('default req_$request_id;');
    expect(conf).toContain('proxy_set_header X-Request-Id $svc_request_id;');
    expect(conf).toContain('proxy_hide_header X-Request-Id;');
    expect(conf).toMatch(/server \{[^]*?\n {8}add_header X-Request-Id \$svc_request_id always;/);
    // nginx drops inherited add_header lines in a location that has its own: each must repeat it.
    const blocks = conf.split(/\n(?= {8}location )/).filter((b) => b.includes('add_header'));
    expect(blocks.length).toBeGreaterThan(1);
    for (const block of blocks) expect(block).toContain('add_header X-Request-Id $svc_request_id always;');
  });

  it('passes the W3C trace context upstream and logs its trace id beside the request id', () => {
    const conf = render();
    expect(conf).toContain('proxy_set_header traceparent $http_traceparent;');
    expect(conf).toContain('proxy_set_header tracestate $http_tracestate;');
    const map = /map \$http_traceparent \$svc_trace_id \{\n([^]*?)\n {4}\}/.exec(conf)?.[1] ?? '';
    const pattern = /"~(.*)" \$svc_tid;/.exec(map)?.[1] ?? '';
    const tid = new RegExp(pattern.replace('(?<svc_tid>', '('));
    expect(tid.exec('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')?.[1]).toBe(
      '4bf92f3577b34da6a3ce929d0e0e4736',
    );
    expect(tid.test('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"x')).toBe(false);
    const format = /log_format svc_json[^]*?'\}';/.exec(conf)?.[0] ?? '';
    expect(format).toContain('"request_id":"$svc_request_id"');
    expect(format).toContain('"trace_id":"$svc_trace_id"');
    expect(format).toContain('"traceparent":"$http_traceparent"');
  });

  it('sends the security headers on every answer: API_CSP unless the app set its own, nosniff, no-referrer', () => {
    const conf = render({ APP_ENV: 'sandbox' });
    const server = /server \{\n([^]*?)\n {8}location /.exec(conf)?.[1] ?? '';
    expect(server).toContain('add_header Content-Security-Policy $svc_csp always;');
    expect(server).toContain('add_header X-Content-Type-Options $svc_nosniff always;');
    expect(server).toContain('add_header Referrer-Policy $svc_referrer_policy always;');
    // consent-ui's pages keep their own policy: the gateway's value is empty, so it is not added.
    const csp = /map \$upstream_http_content_security_policy \$svc_csp \{\n([^]*?)\n {4}\}/.exec(conf)?.[1];
    expect(csp).toContain(`"" "${API_CSP}";`);
    expect(csp).toContain('default "";');
    expect(API_CSP).toBe("default-src 'none'; frame-ancestors 'none'");
    // The docs: no script on the guides; the Redoc reference its bundle and worker, nothing from elsewhere.
    expect(location(conf, '^~ /docs/')).toContain(`add_header Content-Security-Policy "${DOCS_CSP}" always;`);
    expect(DOCS_CSP).not.toContain('script-src');
    const reference = location(conf, '= /docs/reference') ?? '';
    expect(reference).toContain(`add_header Content-Security-Policy "${REFERENCE_CSP}" always;`);
    expect(REFERENCE_CSP).toContain("script-src 'self';");
    expect(REFERENCE_CSP).not.toMatch(/script-src[^;]*unsafe/);
    // A location with add_header of its own repeats the whole set (nginx inherits none into it).
    const blocks = conf.split(/\n(?= {8}location )/).filter((b) => b.includes('add_header'));
    for (const block of blocks) {
      expect(block).toContain('X-Content-Type-Options');
      expect(block).toContain('Referrer-Policy');
      expect(block).toContain('Content-Security-Policy');
    }
  });

  it('sends HSTS in production only, on every answer; never in sandbox (plain http://localhost)', () => {
    expect(render({ APP_ENV: 'sandbox' })).not.toContain('Strict-Transport-Security');
    const conf = render({ APP_ENV: 'production', PUBLIC_BASE_URL: 'https://api.example.test' });
    expect(HSTS).toBe('max-age=31536000; includeSubDomains');
    const blocks = conf.split(/\n(?= {8}location )/).filter((b) => b.includes('add_header'));
    for (const block of blocks) {
      expect(block).toContain(`add_header Strict-Transport-Security "${HSTS}" always;`);
    }
  });

  it('answers nginx-made errors with Problem JSON whose type uses DOCS_URL and whose instance is the request id', () => {
    const docsUrl = 'https://docs.example.test/api/';
    const conf = render({ DOCS_URL: docsUrl });
    const expected: [number, ProblemCode][] = [
      [404, 'not_found'],
      [413, 'payload_too_large'],
      [502, 'bad_gateway'],
      [504, 'gateway_timeout'],
      [400, 'bad_request'],
      [414, 'bad_request'],
      [405, 'method_not_allowed'],
      [500, 'internal_error'],
    ];
    for (const [status, code] of expected) {
      const problem = problemAt(conf, status, 'req_abc');
      expect(problem.status).toBe(PROBLEMS[code].status);
      expect(problem.body).toEqual({
        type: problemType(docsUrl, code),
        title: PROBLEMS[code].title,
        status: PROBLEMS[code].status,
        detail: expect.any(String),
        instance: 'req_abc',
      });
      expect(location(conf, `= ${errorLocation(status)}`)).toContain(
        'default_type application/problem+json;',
      );
      expect(conf).toMatch(
        new RegExp(`error_page ${status} (=${PROBLEMS[code].status} )?${errorLocation(status)};`),
      );
    }
    expect(problemAt(conf, 413, 'x').body).toMatchObject({ detail: expect.stringContaining('5 MiB') });
    // Every error the gateway makes itself is kept by no cache (the OAuth endpoints' errors need
    // no-store), and, as a location with headers of its own, repeats the server's.
    for (const [status] of expected) {
      const block = location(conf, `= ${errorLocation(status)}`);
      expect(block).toContain('add_header Cache-Control "no-store" always;');
      expect(block).toContain('add_header X-Request-Id $svc_request_id always;');
    }
    expect(conf).toContain('proxy_intercept_errors off;');
  });

  it('refuses a route table that nginx would reject or that shadows what the gateway serves itself', () => {
    const route: GatewayRoute = { path: '/v1/things', match: 'prefix', app: 'crew-api' };
    expect(() => render({}, [route, route])).toThrow(/listed twice/);
    expect(() => render({}, [{ ...route, path: '/docs' }])).toThrow(/gateway serves itself/);
    expect(() => render({}, [{ ...route, path: '/healthz', match: 'exact' }])).toThrow(
      /gateway serves itself/,
    );
    expect(() => render({}, [{ ...route, path: '/v1/{id}' }])).toThrow(/plain segments/);
    expect(() => render({}, [{ ...route, path: '/v1/things/' }])).toThrow(/plain segments/);
    // Every app that serves HTTP routes has an upstream now; a route to anything else is refused.
    expect(() => render({}, [{ ...route, app: 'billing-api' as GatewayRoute['app'] }])).toThrow(
      /no upstream/,
    );
    expect(render({}, [route])).toContain('location ^~ /v1/things/ {');
  });
});

describe('gatewayOptionsFromEnv', () => {
  it('is production without APP_ENV, so /internal is never routed by a forgotten variable', () => {
    expect(() => gatewayOptionsFromEnv({})).toThrow(/PUBLIC_BASE_URL is required/);
    expect(gatewayOptionsFromEnv({ PUBLIC_BASE_URL: 'https://api.example.test' }).APP_ENV).toBe('production');
  });

  it('takes the documented defaults', () => {
    const options = gatewayOptionsFromEnv({ APP_ENV: 'sandbox' });
    expect(options).toEqual({
      APP_ENV: 'sandbox',
      GATEWAY_LISTEN_HOST: '0.0.0.0',
      GATEWAY_PORT: 8080,
      PUBLIC_BASE_URL: 'http://localhost:8080',
      DOCS_URL: 'http://localhost:8080/docs',
      AUTH_SERVER_UPSTREAMS: ['127.0.0.1:3001'],
      CONSENT_UI_UPSTREAMS: ['127.0.0.1:3004'],
      CREW_API_UPSTREAMS: ['127.0.0.1:3002'],
      SPONSORSHIP_API_UPSTREAMS: ['127.0.0.1:3003'],
      WEBHOOK_DISPATCHER_UPSTREAMS: ['127.0.0.1:3005'],
      GATEWAY_UPSTREAM_CONNECT_TIMEOUT: 2000,
      GATEWAY_UPSTREAM_READ_TIMEOUT: 15000,
      GATEWAY_UPSTREAM_FAIL_TIMEOUT: 1000,
      GATEWAY_WORKER_PROCESSES: 'auto',
      GATEWAY_TRUSTED_PROXIES: [],
      GATEWAY_LOGIN_RATE: '20r/s',
      GATEWAY_LOGIN_BURST: 200,
      GATEWAY_OAUTH_RATE: '200r/s',
      GATEWAY_OAUTH_BURST: 1000,
      CLIENT_IPV6_PREFIX: 64,
    });
    // Production: strict.
    expect(
      gatewayOptionsFromEnv({ APP_ENV: 'production', PUBLIC_BASE_URL: 'https://api.example.test' }),
    ).toMatchObject({
      GATEWAY_LOGIN_RATE: '30r/m',
      GATEWAY_LOGIN_BURST: 20,
      GATEWAY_OAUTH_RATE: '20r/s',
      GATEWAY_OAUTH_BURST: 100,
    });
    const conf = renderNginxConfig(GATEWAY_ROUTES, options);
    expect(conf).toContain('listen 0.0.0.0:8080 default_server;');
    expect(conf).toContain('proxy_connect_timeout 2s;');
    expect(conf).toContain('proxy_read_timeout 15s;');
  });

  it('reads every variable', () => {
    const options = gatewayOptionsFromEnv({
      APP_ENV: 'production',
      GATEWAY_PORT: '9090',
      GATEWAY_LISTEN_HOST: '::',
      PUBLIC_BASE_URL: 'https://api.example.test/',
      DOCS_URL: 'https://docs.example.test',
      AUTH_SERVER_UPSTREAMS: 'auth-1:3001,auth-2:3001',
      GATEWAY_UPSTREAM_CONNECT_TIMEOUT: '500ms',
      GATEWAY_UPSTREAM_READ_TIMEOUT: '1m',
      GATEWAY_WORKER_PROCESSES: '2',
      GATEWAY_TRUSTED_PROXIES: '10.1.0.0/16,10.1.0.0/16',
      GATEWAY_UPSTREAM_FAIL_TIMEOUT: '3s',
    });
    expect(options).toMatchObject({
      APP_ENV: 'production',
      GATEWAY_PORT: 9090,
      GATEWAY_LISTEN_HOST: '[::]',
      PUBLIC_BASE_URL: 'https://api.example.test',
      DOCS_URL: 'https://docs.example.test',
      GATEWAY_UPSTREAM_CONNECT_TIMEOUT: 500,
      GATEWAY_UPSTREAM_READ_TIMEOUT: 60_000,
      GATEWAY_WORKER_PROCESSES: 2,
      GATEWAY_UPSTREAM_FAIL_TIMEOUT: 3000,
      GATEWAY_TRUSTED_PROXIES: ['10.1.0.0/16'],
    });
    expect(options.AUTH_SERVER_UPSTREAMS).toEqual(['auth-1:3001', 'auth-2:3001']);
    const conf = renderNginxConfig(GATEWAY_ROUTES, options);
    expect(conf).toContain('listen [::]:9090 default_server;');
    expect(conf).toContain('worker_processes 2;');
    expect(conf).toContain('proxy_connect_timeout 500ms;');
    expect(conf).toContain('proxy_read_timeout 60s;');
    expect(conf).toContain('server auth-2:3001 max_fails=1 fail_timeout=3s;');
  });

  it('defaults DOCS_URL to the gateway’s own /docs under PUBLIC_BASE_URL', () => {
    expect(
      gatewayOptionsFromEnv({ APP_ENV: 'sandbox', PUBLIC_BASE_URL: 'https://sandbox.example.test' }).DOCS_URL,
    ).toBe('https://sandbox.example.test/docs');
  });

  it('needs PUBLIC_BASE_URL in production, as the apps do', () => {
    expect(() => gatewayOptionsFromEnv({ APP_ENV: 'production' })).toThrow(/PUBLIC_BASE_URL is required/);
  });

  const bad: [string, string][] = [
    ['APP_ENV', 'staging'],
    ['PUBLIC_BASE_URL', 'localhost:8080'],
    ['PUBLIC_BASE_URL', 'https://api.example.test/$x'],
    ['GATEWAY_PORT', '0'],
    ['GATEWAY_PORT', '65536'],
    ['GATEWAY_PORT', '80a'],
    ['GATEWAY_LISTEN_HOST', 'not a host'],
    ['DOCS_URL', 'docs'],
    ['DOCS_URL', 'ftp://docs.example.test'],
    ['DOCS_URL', 'https://docs.example.test/$x'],
    ['DOCS_URL', 'https://docs.example.test/?q=1'],
    ...NEST_APPS.map((app): [string, string] => [upstreamEnvName(app), '127.0.0.1']),
    ['CREW_API_UPSTREAMS', '127.0.0.1:3002,,127.0.0.1:3012'],
    ['CREW_API_UPSTREAMS', '127.0.0.1:70000'],
    ['CREW_API_UPSTREAMS', 'a:1,a:1'],
    ['CREW_API_UPSTREAMS', 'a b:1'],
    ['GATEWAY_UPSTREAM_CONNECT_TIMEOUT', '2 seconds'],
    ['GATEWAY_UPSTREAM_CONNECT_TIMEOUT', '90s'],
    ['GATEWAY_UPSTREAM_READ_TIMEOUT', '0s'],
    ['GATEWAY_UPSTREAM_READ_TIMEOUT', '-1s'],
    ['GATEWAY_WORKER_PROCESSES', '0'],
    ['GATEWAY_UPSTREAM_FAIL_TIMEOUT', '0s'],
    ['GATEWAY_UPSTREAM_FAIL_TIMEOUT', '1500ms'],
    ['GATEWAY_TRUSTED_PROXIES', '10.0.0.0/33'],
    ['GATEWAY_TRUSTED_PROXIES', '10.0.0.1,'],
    ['GATEWAY_TRUSTED_PROXIES', 'lb.example.test'],
    ['GATEWAY_TRUSTED_PROXIES', '2001:db8::/129'],
    ['GATEWAY_TRUSTED_PROXIES', '10.0.0.0/8/8'],
    ['GATEWAY_TRUSTED_PROXIES', '10.0.0.0/8; allow all'],
    ['GATEWAY_METRICS_SYSLOG', '127.0.0.1'],
    ['GATEWAY_METRICS_SYSLOG', 'exporter:5531'],
    ['GATEWAY_METRICS_SYSLOG', '127.0.0.1:70000'],
    ['GATEWAY_METRICS_SYSLOG', '127.0.0.1:5531 svc_json; error_log x'],
  ];
  it.each(bad)('refuses %s=%j with an error naming the variable', (variable, value) => {
    let caught: unknown;
    try {
      gatewayOptionsFromEnv({ APP_ENV: 'sandbox', [variable]: value });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as ConfigError).problems.map((p) => p.variable)).toContain(variable);
    expect((caught as Error).message).toContain(variable);
  });
});

describe('generate CLI', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gateway-unit-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  function capture(): GenerateIo & { out: string[]; err: string[] } {
    const out: string[] = [];
    const err: string[] = [];
    return { out, err, stdout: (line) => out.push(line), stderr: (line) => err.push(line) };
  }

  it('exits 1 naming the variable on a bad value, and writes nothing', async () => {
    const io = capture();
    const out = join(dir, 'gateway');
    await expect(
      main(['--out', out], { APP_ENV: 'sandbox', GATEWAY_UPSTREAM_READ_TIMEOUT: 'soon' }, io),
    ).resolves.toBe(1);
    expect(io.err.join('\n')).toContain('GATEWAY_UPSTREAM_READ_TIMEOUT');
    expect(existsSync(out)).toBe(false);
  });

  it('exits 2 without --out', async () => {
    const io = capture();
    await expect(main([], {}, io)).resolves.toBe(2);
    expect(io.err.join('\n')).toContain('--out');
  });

  /** A built site as `npm run build` lays it out, with the placeholders the generator fills. */
  async function siteFixture(): Promise<string> {
    const site = join(dir, 'site');
    await mkdir(join(site, 'docs'), { recursive: true });
    await writeFile(join(site, 'docs', 'reference.html'), '<!doctype html><title>reference</title>');
    await writeFile(
      join(site, 'docs', 'index.html'),
      '<!doctype html><p>Base @@PUBLIC_BASE_URL@@, errors @@DOCS_URL@@/errors/</p>',
    );
    return site;
  }

  it.each(['sandbox', 'production'])(
    'writes an nginx prefix (%s) that `nginx -t -p <out> -c <out>/nginx.conf` accepts',
    async (appEnv) => {
      const io = capture();
      const out = join(dir, appEnv);
      const env = {
        APP_ENV: appEnv,
        GATEWAY_PORT: '18080',
        PUBLIC_BASE_URL: 'https://api.example.test',
        // As in k8s/: the access-log metrics exporter beside nginx (nothing need listen for -t).
        ...(appEnv === 'production' ? { GATEWAY_METRICS_SYSLOG: '127.0.0.1:5531' } : {}),
      };
      await expect(main([`--out=${out}`, '--static', await siteFixture()], env, io)).resolves.toBe(0);
      expect(await readFile(join(out, 'nginx.conf'), 'utf8')).toBe(render(env));
      const description = JSON.parse(await readFile(join(out, 'html/openapi.json'), 'utf8'));
      expect(description).toMatchObject({ openapi: '3.1.0', info: { version: '1.0.0' } });
      expect(description.servers).toEqual([
        { url: 'https://api.example.test', description: 'This environment' },
      ]);
      expect(parseYaml(await readFile(join(out, 'html/openapi.yaml'), 'utf8'))).toEqual(description);
      expect(await readFile(join(out, 'html/docs/index.html'), 'utf8')).toContain(
        '<p>Base https://api.example.test, errors https://api.example.test/docs/errors/</p>',
      );
      for (const file of [
        'html/openapi.json',
        'html/openapi.yaml',
        'html/docs/index.html',
        'temp/client_body',
      ]) {
        expect(existsSync(join(out, file))).toBe(true);
      }
      // stdout is not a Node pipe: nginx opens /dev/stdout for the access log, which fails on a socket.
      const result = spawnSync(nginxBinary(), ['-t', '-p', `${out}/`, '-c', join(out, 'nginx.conf')], {
        encoding: 'utf8',
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      expect(result.error).toBeUndefined();
      expect({ status: result.status, stderr: result.stderr }).toEqual({
        status: 0,
        stderr: expect.stringContaining('test is successful'),
      });
    },
    // Renders the OpenAPI document and starts nginx: seconds on a loaded machine, not Jest's default 5.
    30_000,
  );
});

describe('abuse limits (limit_req)', () => {
  it('limits POST /login, /oauth/token and /oauth/revoke per client address, with burst and nodelay', () => {
    const conf = render({ APP_ENV: 'production' });
    expect(conf).toContain('limit_req_zone $svc_login_limit_key zone=svc_login:10m rate=30r/m;');
    expect(conf).toContain('limit_req_zone $svc_client_key zone=svc_oauth:10m rate=20r/s;');
    expect(conf).toMatch(
      /map \$request_method \$svc_login_limit_key \{\n\s+POST \$svc_client_key;\n\s+default "";/,
    );
    expect(conf).toContain('limit_req_status 429;');
    expect(location(conf, '= /login')).toContain('limit_req zone=svc_login burst=20 nodelay;');
    expect(location(conf, '= /oauth/token')).toContain('limit_req zone=svc_oauth burst=100 nodelay;');
    expect(location(conf, '= /oauth/revoke')).toContain('limit_req zone=svc_oauth burst=100 nodelay;');
    expect(Object.keys(LIMITED_ROUTES).sort()).toEqual(['/login', '/oauth/revoke', '/oauth/token']);
    // Nothing else is limited by the gateway (/v1/* keeps the apps' own rate limits).
    expect(conf.match(/limit_req zone=/g)).toHaveLength(3);
    expect(location(conf, '= /oauth/userinfo')).not.toContain('limit_req');
    expect(location(conf, '^~ /v1/me/')).not.toContain('limit_req');
  });

  it('is generous by default in the sandbox, where partner test suites run from one address', () => {
    const conf = render({ APP_ENV: 'sandbox' });
    expect(conf).toContain('limit_req_zone $svc_login_limit_key zone=svc_login:10m rate=20r/s;');
    expect(conf).toContain('limit_req_zone $svc_client_key zone=svc_oauth:10m rate=200r/s;');
    expect(location(conf, '= /login')).toContain('limit_req zone=svc_login burst=200 nodelay;');
    expect(location(conf, '= /oauth/token')).toContain('limit_req zone=svc_oauth burst=1000 nodelay;');
  });

  it('keys a client by its address, an IPv6 client by its first CLIENT_IPV6_PREFIX bits (whole bytes)', () => {
    const key = (conf: string) => {
      const lines = conf.split('\n').map((line) => line.trim());
      const from = lines.indexOf('map $binary_remote_addr $svc_client_key {');
      return lines.slice(from + 1, lines.indexOf('}', from));
    };
    expect(key(render({ APP_ENV: 'production' }))).toEqual([
      '"~^(?s)\\x00{10}\\xff\\xff(.{4})$" $1;',
      '"~^(?s)(.{8}).{8}$" 6$1;',
      'default $binary_remote_addr;',
    ]);
    expect(key(render({ APP_ENV: 'production', CLIENT_IPV6_PREFIX: '48' }))).toContain(
      '"~^(?s)(.{6}).{10}$" 6$1;',
    );
    expect(() => render({ APP_ENV: 'production', CLIENT_IPV6_PREFIX: '60' })).toThrow(/CLIENT_IPV6_PREFIX/);
  });

  it('keeps every gateway error page in the limited locations and adds its 429', () => {
    const conf = render();
    for (const [path, kind] of Object.entries(LIMITED_ROUTES)) {
      const block = location(conf, `= ${path}`) ?? '';
      expect(block).toContain(`error_page 429 ${limitErrorLocation(kind)};`);
      expect(block).toContain(`error_page 502 ${errorLocation(502)};`);
      expect(block).toContain(`error_page 413 ${errorLocation(413)};`);
    }
  });

  it('answers an OAuth-shaped JSON error and a sign-in page, each with Retry-After', () => {
    const conf = render({ GATEWAY_LOGIN_RATE: '10r/m', GATEWAY_OAUTH_RATE: '5r/s' });
    const oauth = location(conf, `= ${limitErrorLocation('oauth')}`) ?? '';
    expect(oauth).toContain('internal;');
    expect(oauth).toContain('default_type application/json;');
    expect(oauth).toContain('add_header Retry-After 1 always;');
    expect(oauth).toContain('add_header Cache-Control no-store always;');
    expect(oauth).toContain('add_header X-Request-Id $svc_request_id always;');
    // add_header lines of its own: the security headers are repeated, not lost.
    expect(oauth).toContain('add_header Content-Security-Policy $svc_csp always;');
    expect(oauth).toContain('add_header X-Content-Type-Options $svc_nosniff always;');
    expect(oauth).toContain(`return 429 '{"error":"temporarily_unavailable"`);
    const login = location(conf, `= ${limitErrorLocation('login')}`) ?? '';
    expect(login).toContain('default_type text/html;');
    expect(login).toContain('add_header Retry-After 6 always;');
    expect(login).toContain('Too many sign-in attempts');
  });

  it('reads GATEWAY_LOGIN_RATE/BURST and GATEWAY_OAUTH_RATE/BURST and refuses bad values', () => {
    const conf = render({
      GATEWAY_LOGIN_RATE: '5r/s',
      GATEWAY_LOGIN_BURST: '0',
      GATEWAY_OAUTH_RATE: '600r/m',
      GATEWAY_OAUTH_BURST: '7',
    });
    expect(conf).toContain('zone=svc_login:10m rate=5r/s;');
    expect(conf).toContain('zone=svc_oauth:10m rate=600r/m;');
    expect(location(conf, '= /login')).toContain('limit_req zone=svc_login nodelay;');
    expect(location(conf, '= /oauth/token')).toContain('limit_req zone=svc_oauth burst=7 nodelay;');
    for (const [variable, value] of [
      ['GATEWAY_LOGIN_RATE', '10'],
      ['GATEWAY_LOGIN_RATE', '0r/s'],
      ['GATEWAY_OAUTH_RATE', '10r/h'],
      ['GATEWAY_OAUTH_BURST', '-1'],
      ['GATEWAY_LOGIN_BURST', 'many'],
    ]) {
      expect(() => render({ [variable]: value })).toThrow(ConfigError);
      expect(() => render({ [variable]: value })).toThrow(variable);
    }
  });
});
