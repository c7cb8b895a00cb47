'use strict';
// The service's processes as the scripts and the e2e harness see them: which apps exist, where
// their built entry points are, the environment each one gets, and how the nginx gateway's
// configuration is generated and nginx started. Node builtins only.
//
// The app list and ports mirror libs/contracts/src/apps.ts (the scripts run before anything is
// compiled); test/support/apps-mirror.spec.ts fails when the two drift apart.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { ROOT } = require('./deps.cjs');
const { run } = require('./procs.cjs');

const NEST_APPS = ['auth-server', 'consent-ui', 'crew-api', 'sponsorship-api', 'webhook-dispatcher'];
const DEFAULT_PORTS = {
  gateway: 8080,
  'auth-server': 3001,
  'crew-api': 3002,
  'sponsorship-api': 3003,
  'consent-ui': 3004,
  'webhook-dispatcher': 3005,
};
/** Each app's METRICS_PORT under `npm start` (its replicas add 100 each, like PORT). */
const DEFAULT_METRICS_PORTS = {
  'auth-server': 9301,
  'crew-api': 9302,
  'sponsorship-api': 9303,
  'consent-ui': 9304,
  'webhook-dispatcher': 9305,
};
/** Apps behind the gateway, and the generator's variable listing each one's upstream servers. */
const GATEWAY_UPSTREAM_VARS = {
  'auth-server': 'AUTH_SERVER_UPSTREAMS',
  'consent-ui': 'CONSENT_UI_UPSTREAMS',
  'crew-api': 'CREW_API_UPSTREAMS',
  'sponsorship-api': 'SPONSORSHIP_API_UPSTREAMS',
  'webhook-dispatcher': 'WEBHOOK_DISPATCHER_UPSTREAMS',
};

const DIST = path.join(ROOT, 'dist');

/** Processes per app for `npm start` (REPLICAS): an integer from 1 to 8, default 1. */
const MAX_REPLICAS = 8;
function parseReplicas(raw) {
  const text = raw === undefined ? '' : String(raw).trim();
  if (text === '') return 1;
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > MAX_REPLICAS) {
    throw new Error(
      `REPLICAS must be an integer from 1 to ${MAX_REPLICAS} (got ${JSON.stringify(String(raw))})`,
    );
  }
  return Number(text);
}

/** The port of an app's replica i (0-based) under `npm start`: its default port + 100·i. */
function replicaPort(app, replica) {
  return DEFAULT_PORTS[app] + 100 * replica;
}

/** The metrics port of an app's replica i (0-based) under `npm start`: its default + 100·i. */
function replicaMetricsPort(app, replica) {
  return DEFAULT_METRICS_PORTS[app] + 100 * replica;
}

/**
 * The Node options every app process runs with in production (k8s/base/kustomization.yaml is the
 * one place they are written): the scripts start apps the same way, so the benches measure what
 * Kubernetes runs.
 */
const APP_NODE_OPTIONS = (() => {
  const manifest = fs.readFileSync(path.join(ROOT, 'k8s', 'base', 'kustomization.yaml'), 'utf8');
  const found = /^\s*- NODE_OPTIONS=(.+)$/m.exec(manifest);
  if (!found) throw new Error('k8s/base/kustomization.yaml no longer sets NODE_OPTIONS for the apps');
  return found[1].trim();
})();
/**
 * An app's own Node options where its Deployment sets them (k8s/base/apps/<app>.yaml, an `env`
 * entry NODE_OPTIONS, which wins over the shared ConfigMap), else the shared ones.
 */
function nodeOptionsOf(app) {
  const file = path.join(ROOT, 'k8s', 'base', 'apps', `${app}.yaml`);
  if (!fs.existsSync(file)) return APP_NODE_OPTIONS;
  const found = /^\s*- name: NODE_OPTIONS\s*\n\s*value: "?([^"\n]+)"?\s*$/m.exec(
    fs.readFileSync(file, 'utf8'),
  );
  return found ? found[1].trim() : APP_NODE_OPTIONS;
}
const mainJs = (app) => path.join(DIST, 'apps', app, 'src', 'main.js');
const cliJs = (app) => path.join(DIST, 'apps', app, 'src', 'cli.js');
const GENERATOR_JS = path.join(DIST, 'apps', 'gateway', 'src', 'generate.js');
const hasSource = (app) => fs.existsSync(path.join(ROOT, 'apps', app, 'src', 'main.ts'));

/** Apps whose source exists (the rest are not written yet). */
function writtenApps() {
  return NEST_APPS.filter(hasSource);
}

/** Throws a clear message when the build output of `apps` (or of the gateway generator) is missing. */
function assertBuilt(apps, { generator = false, cli = true } = {}) {
  const missing = [];
  for (const app of apps) {
    if (!fs.existsSync(mainJs(app))) missing.push(path.relative(ROOT, mainJs(app)));
    if (cli && !fs.existsSync(cliJs(app))) missing.push(path.relative(ROOT, cliJs(app)));
  }
  if (generator && !fs.existsSync(GENERATOR_JS)) missing.push(path.relative(ROOT, GENERATOR_JS));
  if (missing.length)
    throw new Error(`build output missing: ${missing.join(', ')} (run \`npm run build\` first)`);
}

/**
 * The environment of an app process. Layers, later wins:
 *   the caller's environment (everything passes through, e.g. WEBHOOK_RETRY_SCHEDULE),
 *   defaults for what is unset, `services` (URLs found by provisioning / the run's isolation),
 *   `fixed` (PORT and whatever the caller pins).
 */
function appEnv({ app, services = {}, fixed = {}, gatewayPort = DEFAULT_PORTS.gateway } = {}) {
  const env = { ...process.env };
  const publicBaseUrl = fixed.PUBLIC_BASE_URL || env.PUBLIC_BASE_URL || `http://localhost:${gatewayPort}`;
  const appEnvName = fixed.APP_ENV || env.APP_ENV || 'sandbox';
  const defaults = {
    APP_ENV: appEnvName,
    PUBLIC_BASE_URL: publicBaseUrl,
    DOCS_URL: `${publicBaseUrl.replace(/\/+$/, '')}/docs`,
    LOG_LEVEL: 'info',
    REDIS_KEY_PREFIX: `${appEnvName}:`,
    NODE_OPTIONS: app ? nodeOptionsOf(app) : APP_NODE_OPTIONS,
    // Scripts start several apps on one host (benches, CLIs): a free metrics port each, unless the
    // caller pins one (`npm start` does, see DEFAULT_METRICS_PORTS).
    METRICS_PORT: '0',
  };
  for (const [k, v] of Object.entries(defaults)) if (!env[k]) env[k] = v;
  for (const [k, v] of Object.entries(services)) if (v !== undefined && v !== '') env[k] = String(v);
  for (const [k, v] of Object.entries(fixed)) if (v !== undefined) env[k] = String(v);
  return env;
}

/** Runs `node dist/apps/<app>/src/cli.js <command>`; rejects with a clear message on failure. */
async function runCli(app, command, env, { prefix, logFile, timeoutMs = 180000, onStart } = {}) {
  const res = await run(process.execPath, [cliJs(app), command], {
    env,
    cwd: ROOT,
    prefix,
    logFile,
    timeoutMs,
    onStart,
  });
  if (res.code !== 0) {
    const where = logFile ? ` (log: ${path.relative(ROOT, logFile)})` : '';
    throw new Error(
      `${app}: \`cli.js ${command}\` failed (${res.timedOut ? 'timed out' : `exit ${res.code ?? res.signal}`})${where}`,
    );
  }
}

/**
 * Writes the gateway's nginx.conf + html into outDir, upstreams pointing at `ports`
 * ({ app: port | 'host:port,host:port' }). Rejects when the generator fails.
 */
async function generateGateway(outDir, { gatewayPort, ports, env, prefix, logFile, onStart }) {
  fs.mkdirSync(outDir, { recursive: true });
  const genEnv = { ...env, GATEWAY_PORT: String(gatewayPort) };
  for (const [app, v] of Object.entries(GATEWAY_UPSTREAM_VARS)) {
    const target = ports[app] ?? DEFAULT_PORTS[app];
    genEnv[v] = String(target).includes(':') ? String(target) : `127.0.0.1:${target}`;
  }
  const res = await run(process.execPath, [GENERATOR_JS, '--out', outDir], {
    env: genEnv,
    cwd: ROOT,
    prefix,
    logFile,
    timeoutMs: 60000,
    onStart,
  });
  if (res.code !== 0) throw new Error(`gateway: generate.js failed (exit ${res.code ?? res.signal})`);
  if (!fs.existsSync(path.join(outDir, 'nginx.conf')))
    throw new Error(`gateway: generate.js wrote no ${outDir}/nginx.conf`);
}

/**
 * Arguments that run nginx in the foreground on the generated configuration. Directives the
 * generated file leaves out (daemon, pid, error_log) are added with -g so that two gateways
 * (a running `npm start` and a test run) never share a pid file.
 */
function nginxArgs(outDir) {
  const conf = path.join(outDir, 'nginx.conf');
  const text = fs.readFileSync(conf, 'utf8').replace(/#.*$/gm, '');
  const extra = [];
  if (!/^\s*daemon\s/m.test(text)) extra.push('daemon off;');
  if (!/^\s*pid\s/m.test(text)) extra.push(`pid ${path.join(outDir, 'nginx.pid')};`);
  if (!/^\s*error_log\s/m.test(text)) extra.push('error_log stderr;');
  // Started as root, nginx runs its workers as `nobody`, who cannot enter a checkout inside a private
  // folder (root's home, `mktemp -d`) to read html/ or write temp/: the workers run as the user who
  // starts the gateway instead, and no folder's permissions are widened for them.
  if (!/^\s*user\s/m.test(text) && process.getuid?.() === 0) extra.push(`user ${os.userInfo().username};`);
  const args = ['-p', `${outDir}/`, '-c', conf, '-e', 'stderr'];
  if (extra.length) args.push('-g', extra.join(' '));
  return args;
}

module.exports = {
  ROOT,
  DIST,
  NEST_APPS,
  DEFAULT_PORTS,
  DEFAULT_METRICS_PORTS,
  GATEWAY_UPSTREAM_VARS,
  MAX_REPLICAS,
  parseReplicas,
  replicaPort,
  replicaMetricsPort,
  GENERATOR_JS,
  mainJs,
  APP_NODE_OPTIONS,
  nodeOptionsOf,
  cliJs,
  writtenApps,
  assertBuilt,
  appEnv,
  runCli,
  generateGateway,
  nginxArgs,
};
