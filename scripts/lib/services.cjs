'use strict';
// Finds or starts the backing services the apps need: PostgreSQL, Redis, RabbitMQ, and the
// nginx binary of the gateway; also Prometheus' binaries (promtool for the alert tests, the
// server for the e2e scrape test). For each one, in this order:
//   1. the URL from the environment (DATABASE_URL, REDIS_URL, REDIS_CACHE_URL, AMQP_URL) when it answers;
//   2. a server already listening on the default local port;
//   3. `docker compose up -d <service>` of scripts/services.compose.yml when a Docker engine answers;
//   4. the locally installed server, started directly (no systemd here);
//   5. as root: apt-get install, then 4.
// It prints one line per decision, and remembers which servers it started itself so that the
// caller can stop exactly those (and leave alone what was already running).
// Node builtins only (plus `pg`, loaded lazily after ensureNodeModules()).
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { ROOT } = require('./deps.cjs');
const { tcpReachable, waitForPort, redisCommands, sleep } = require('./net.cjs');
const { capture, which } = require('./procs.cjs');
const { ensurePgRoles } = require('./credentials.cjs');

const DEFAULTS = {
  DATABASE_URL: 'postgres://svc:svc@127.0.0.1:5432/svc',
  REDIS_URL: 'redis://127.0.0.1:6379',
  REDIS_CACHE_URL: 'redis://127.0.0.1:6380',
  AMQP_URL: 'amqp://guest:guest@127.0.0.1:5672/',
};
const RABBIT_MANAGEMENT_PORT = 15672;
const SERVICES_DIR = path.join(ROOT, '.run', 'services');
const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost', '::1', '[::1]', '0.0.0.0']);

const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;
const isLocal = (host) => LOCAL_HOSTS.has(host);
const aptEnv = () => ({ ...process.env, DEBIAN_FRONTEND: 'noninteractive' });

// ---------------------------------------------------------------------------------------
// Docker

let dockerAnswer;
const COMPOSE_FILE = path.join(ROOT, 'scripts', 'services.compose.yml');
const compose = (...args) => ['compose', '-f', COMPOSE_FILE, ...args];

/** True when a Docker engine answers. Checked once; SVC_NO_DOCKER=1 skips it. */
function dockerEngine() {
  if (dockerAnswer !== undefined) return dockerAnswer;
  dockerAnswer = false;
  if (process.env.SVC_NO_DOCKER || !which('docker')) return dockerAnswer;
  dockerAnswer =
    capture('docker', ['info', '--format', '{{.ServerVersion}}'], { timeoutMs: 10000 }).status === 0;
  return dockerAnswer;
}

/** `docker compose up -d <service>` of scripts/services.compose.yml (ports on loopback). */
function composeUp(service) {
  const res = capture('docker', compose('up', '-d', '--wait', service), { cwd: ROOT, timeoutMs: 600000 });
  if (res.status !== 0) throw new Error(`docker compose up -d ${service} failed:\n${res.stderr}`);
  return {
    name: `${service} (docker)`,
    stop: async () => void capture('docker', compose('stop', service), { cwd: ROOT, timeoutMs: 60000 }),
  };
}

// ---------------------------------------------------------------------------------------
// apt

let aptUpdated = false;
function aptInstall(packages, log) {
  if (!packages.length) return;
  if (!isRoot() || !which('apt-get')) {
    throw new Error(
      `missing: ${packages.join(', ')}. Install them (apt-get install ${packages.join(' ')}), ` +
        'or point DATABASE_URL / REDIS_URL / AMQP_URL at running servers.',
    );
  }
  if (!aptUpdated) {
    log('apt: apt-get update');
    const up = capture('apt-get', ['update'], { env: aptEnv(), timeoutMs: 300000 });
    if (up.status !== 0) throw new Error(`apt-get update failed:\n${up.stderr}`);
    aptUpdated = true;
  }
  log(`apt: installing ${packages.join(' ')}`);
  const res = capture('apt-get', ['install', '-y', '--no-install-recommends', ...packages], {
    env: aptEnv(),
    timeoutMs: 900000,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (res.status !== 0)
    throw new Error(
      `apt-get install ${packages.join(' ')} failed:\n${res.stdout.slice(-2000)}\n${res.stderr}`,
    );
}

/** Debian package of nginx: nginx-light where the release still has it, else nginx. */
function nginxPackage() {
  return capture('apt-cache', ['show', 'nginx-light'], { timeoutMs: 30000 }).status === 0
    ? 'nginx-light'
    : 'nginx';
}

// ---------------------------------------------------------------------------------------
// Planning: what to do for each service

function parseUrl(raw, defaultPort) {
  const u = new URL(raw);
  return {
    url: u,
    host: u.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1',
    port: Number(u.port || defaultPort),
  };
}

function postgresBinaries() {
  const base = '/usr/lib/postgresql';
  if (!fs.existsSync(base) || !which('pg_ctlcluster')) return [];
  return fs
    .readdirSync(base)
    .filter((v) => fs.existsSync(path.join(base, v, 'bin', 'postgres')))
    .sort((a, b) => Number(b) - Number(a));
}

const SPECS = {
  postgres: {
    envVar: 'DATABASE_URL',
    defaultPort: 5432,
    installed: () => postgresBinaries().length > 0,
    package: () => 'postgresql',
  },
  redis: {
    envVar: 'REDIS_URL',
    defaultPort: 6379,
    installed: () => Boolean(which('redis-server')),
    package: () => 'redis-server',
  },
  redisCache: {
    envVar: 'REDIS_CACHE_URL',
    defaultPort: 6380,
    service: 'redis-cache',
    installed: () => Boolean(which('redis-server')),
    package: () => 'redis-server',
  },
  rabbitmq: {
    envVar: 'AMQP_URL',
    defaultPort: 5672,
    installed: () => Boolean(which('rabbitmq-server')),
    package: () => 'rabbitmq-server',
  },
};

/** Decides, without starting anything, how each service will be had. */
async function plan(name, log) {
  const spec = SPECS[name];
  const fromEnv = process.env[spec.envVar];
  const target = parseUrl(fromEnv || DEFAULTS[spec.envVar], spec.defaultPort);
  if (fromEnv) {
    if (await tcpReachable(target.host, target.port, 2000)) {
      log(`${name}: using ${spec.envVar} (${target.host}:${target.port})`);
      return { name, mode: 'env', target, url: fromEnv };
    }
    if (!isLocal(target.host)) {
      throw new Error(
        `${name}: ${spec.envVar} points at ${target.host}:${target.port}, which does not answer`,
      );
    }
    log(
      `${name}: ${spec.envVar} (${target.host}:${target.port}) does not answer yet; starting a local server`,
    );
  } else if (await tcpReachable('127.0.0.1', target.port, 1000)) {
    log(`${name}: found a server on 127.0.0.1:${target.port}`);
    return { name, mode: 'listening', target, url: DEFAULTS[spec.envVar] };
  }
  const url = fromEnv || DEFAULTS[spec.envVar];
  if (dockerEngine() && target.port === spec.defaultPort)
    return { name, mode: 'docker', target, url, service: spec.service || name };
  if (spec.installed()) return { name, mode: 'local', target, url };
  return { name, mode: 'install', target, url, package: spec.package() };
}

// ---------------------------------------------------------------------------------------
// PostgreSQL

function pgClusters() {
  const res = capture('pg_lsclusters', ['--no-header'], { timeoutMs: 20000 });
  if (res.status !== 0) return [];
  return res.stdout
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f.length >= 4)
    .map(([version, cluster, port, status]) => ({ version, cluster, port: Number(port), status }));
}

async function startPostgres(p, log) {
  let cluster = pgClusters().find((c) => c.port === p.target.port);
  if (!cluster) {
    const version = postgresBinaries()[0];
    log(`postgres: creating cluster ${version}/main on port ${p.target.port}`);
    const res = capture('pg_createcluster', [version, 'main', '--port', String(p.target.port)], {
      timeoutMs: 120000,
    });
    if (res.status !== 0) throw new Error(`pg_createcluster failed:\n${res.stdout}${res.stderr}`);
    cluster = { version, cluster: 'main', port: p.target.port };
  }
  const id = `${cluster.version}/${cluster.cluster}`;
  log(`postgres: starting local cluster ${id}`);
  const res = capture('pg_ctlcluster', [cluster.version, cluster.cluster, 'start'], { timeoutMs: 120000 });
  if (res.status !== 0 && !/already running/i.test(res.stderr + res.stdout)) {
    throw new Error(
      `pg_ctlcluster ${cluster.version} ${cluster.cluster} start failed:\n${res.stdout}${res.stderr}`,
    );
  }
  await waitForPort('127.0.0.1', p.target.port, 60000, `postgres ${id}`);
  return {
    name: `postgres ${id}`,
    stop: async () =>
      void capture('pg_ctlcluster', [cluster.version, cluster.cluster, 'stop', '-m', 'fast'], {
        timeoutMs: 60000,
      }),
  };
}

const sqlLiteral = (s) => `'${String(s).replace(/'/g, "''")}'`;
const sqlIdent = (s) => `"${String(s).replace(/"/g, '""')}"`;

/** psql as the postgres superuser over the local socket (peer auth); null when that is impossible. */
function superPsql(port, sql) {
  if (!isRoot() || !which('runuser') || !which('psql')) return null;
  return capture(
    'runuser',
    [
      '-u',
      'postgres',
      '--',
      'psql',
      '-p',
      String(port),
      '-v',
      'ON_ERROR_STOP=1',
      '-qAtX',
      '-d',
      'postgres',
      '-c',
      sql,
    ],
    {
      cwd: '/',
      timeoutMs: 30000,
    },
  );
}

/** Ensures the login role (with CREATEDB, for per-run test databases) and its database exist. */
function ensurePgRoleViaSuperuser(target) {
  const user = decodeURIComponent(target.url.username || 'svc');
  const pass = decodeURIComponent(target.url.password || 'svc');
  const db = decodeURIComponent(target.url.pathname.replace(/^\//, '') || user);
  const role = superPsql(
    target.port,
    `DO $$ BEGIN
       IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = ${sqlLiteral(user)}) THEN
         CREATE ROLE ${sqlIdent(user)} LOGIN CREATEDB PASSWORD ${sqlLiteral(pass)};
       ELSE
         ALTER ROLE ${sqlIdent(user)} LOGIN CREATEDB PASSWORD ${sqlLiteral(pass)};
       END IF;
     END $$;`,
  );
  if (!role || role.status !== 0) return false;
  const exists = superPsql(target.port, `SELECT 1 FROM pg_database WHERE datname = ${sqlLiteral(db)}`);
  if (!exists || exists.status !== 0) return false;
  if (exists.stdout.trim() !== '1') {
    const created = superPsql(target.port, `CREATE DATABASE ${sqlIdent(db)} OWNER ${sqlIdent(user)}`);
    if (!created || created.status !== 0) return false;
  }
  return { user, db };
}

/** Connects with `url`; resolves '' on success or the error message. */
async function pgLogin(url) {
  const { Client } = require('pg');
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return '';
  } catch (err) {
    return err.message;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function readyPostgres(p, log) {
  if (p.mode !== 'env' && p.mode !== 'docker' && isLocal(p.target.host)) {
    const ok = ensurePgRoleViaSuperuser(p.target);
    if (ok) log(`postgres: role ${ok.user} (CREATEDB) and database ${ok.db} ready`);
  }
  // The server may still be finishing its start-up (recovery) right after the port opens.
  let error = '';
  for (let i = 0; i < 20; i++) {
    error = await pgLogin(p.url);
    if (!error || !/starting up|ECONNREFUSED|recovery/i.test(error)) break;
    await sleep(500);
  }
  if (error) throw new Error(`postgres: cannot log in with ${redact(p.url)}: ${error}`);
  // Each app's own login role (granted its schema by the migrations).
  await ensurePgRoles(p.url, {
    superPsql: p.mode !== 'docker' && isLocal(p.target.host) ? superPsql : null,
    port: p.target.port,
    log,
  });
}

// ---------------------------------------------------------------------------------------
// Redis

/**
 * The two Redis roles the apps use. The state Redis (limiter windows, sign-in counters,
 * revocation tombstones) must never evict: it refuses writes when full. The cache Redis
 * (token-introspection answers) evicts the least recently used key instead.
 */
const REDIS_ROLES = {
  redis: { file: 'redis', args: ['--maxmemory-policy', 'noeviction'], what: 'state, noeviction' },
  redisCache: {
    file: 'redis-cache',
    args: ['--maxmemory', '256mb', '--maxmemory-policy', 'allkeys-lru'],
    what: 'token cache, allkeys-lru',
  },
};

async function startRedis(p, log) {
  const role = REDIS_ROLES[p.name];
  fs.mkdirSync(SERVICES_DIR, { recursive: true });
  log(`${p.name}: starting redis-server on 127.0.0.1:${p.target.port} (${role.what}, no persistence)`);
  const res = capture(
    'redis-server',
    [
      '--bind',
      '127.0.0.1',
      '--port',
      String(p.target.port),
      ...role.args,
      '--save',
      '',
      '--appendonly',
      'no',
      '--daemonize',
      'yes',
      '--dir',
      SERVICES_DIR,
      '--pidfile',
      path.join(SERVICES_DIR, `${role.file}.pid`),
      '--logfile',
      path.join(SERVICES_DIR, `${role.file}.log`),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], timeoutMs: 30000 },
  );
  if (res.status !== 0) throw new Error(`redis-server failed to start:\n${res.stdout}${res.stderr}`);
  await waitForPort('127.0.0.1', p.target.port, 30000, p.name);
  return {
    name: p.name,
    stop: async () => {
      // The server closes the connection instead of answering SHUTDOWN.
      await redisCommands(p.url, [['SHUTDOWN', 'NOSAVE']], 5000).catch(() => undefined);
      for (let i = 0; i < 40 && (await tcpReachable('127.0.0.1', p.target.port, 300)); i++) await sleep(250);
    },
  };
}

async function readyRedis(p) {
  let last;
  for (let i = 0; i < 20; i++) {
    try {
      const [pong] = await redisCommands(p.url, [['PING']]);
      if (pong === 'PONG') return;
      last = new Error(`unexpected answer ${pong}`);
    } catch (err) {
      last = err;
    }
    await sleep(250);
  }
  throw new Error(`${p.name}: no PONG from ${redact(p.url)}: ${last && last.message}`);
}

// ---------------------------------------------------------------------------------------
// RabbitMQ

function enableRabbitManagement(log) {
  const file = '/etc/rabbitmq/enabled_plugins';
  if (fs.existsSync(file) && fs.readFileSync(file, 'utf8').includes('rabbitmq_management')) return;
  log('rabbitmq: enabling rabbitmq_management (offline)');
  const res = capture('rabbitmq-plugins', ['enable', '--offline', 'rabbitmq_management'], {
    timeoutMs: 120000,
  });
  if (res.status !== 0) throw new Error(`rabbitmq-plugins enable failed:\n${res.stdout}${res.stderr}`);
}

async function startRabbit(p, log) {
  enableRabbitManagement(log);
  const epmdWasRunning = await tcpReachable('127.0.0.1', 4369, 500);
  fs.mkdirSync(SERVICES_DIR, { recursive: true });
  const logFile = path.join(SERVICES_DIR, 'rabbitmq.log');
  log(`rabbitmq: starting rabbitmq-server (takes ~10 s; log ${path.relative(ROOT, logFile)})`);
  const fd = fs.openSync(logFile, 'a');
  // Detached, output to a file: it must hold none of our pipes (CI waits on them).
  const child = spawn('rabbitmq-server', [], { detached: true, stdio: ['ignore', fd, fd], cwd: '/' });
  fs.closeSync(fd);
  let exited = false;
  child.once('exit', () => (exited = true));
  child.once('error', () => (exited = true));
  child.unref();
  const deadline = Date.now() + 120000;
  for (const port of [p.target.port, RABBIT_MANAGEMENT_PORT]) {
    while (!(await tcpReachable('127.0.0.1', port, 1000))) {
      if (exited) throw new Error(`rabbitmq-server exited during start-up; see ${logFile}`);
      if (Date.now() > deadline)
        throw new Error(`rabbitmq: port ${port} not open after 120 s; see ${logFile}`);
      await sleep(500);
    }
  }
  return {
    name: 'rabbitmq',
    stop: async () => {
      const res = capture('rabbitmqctl', ['shutdown'], { timeoutMs: 60000 });
      if (res.status !== 0 && !exited) {
        try {
          process.kill(-child.pid, 'SIGTERM');
        } catch {
          /* gone */
        }
      }
      // The Erlang port mapper came up with the server; take it down with it.
      if (!epmdWasRunning && which('epmd')) capture('epmd', ['-kill'], { timeoutMs: 10000 });
    },
  };
}

// ---------------------------------------------------------------------------------------
// nginx, chromium

function nginxBinary() {
  return which('nginx');
}

function chromiumBinary() {
  return which('chromium') || which('chromium-browser');
}

// Debian's `prometheus` package ships both: promtool (`promtool check rules`/`test rules` of
// k8s/components/monitoring, unit tier) and the server (test/e2e/monitoring.e2e-spec.ts). Its
// maintainer script may try to start a systemd service; nothing here relies on that.
function prometheusBinaries() {
  const promtool = which('promtool');
  const server = which('prometheus');
  return promtool && server ? { PROMTOOL_BIN: promtool, PROMETHEUS_BIN: server } : null;
}

/**
 * Finds nginx, promtool and prometheus, installing what is missing with apt-get (as root), for
 * the unit tier, which starts no server but runs `nginx -t` on the generated gateway config and
 * promtool on the alert rules. Resolves { NGINX_BIN, PROMTOOL_BIN, PROMETHEUS_BIN }.
 */
function ensureUnitTools({ log = (l) => console.log(l) } = {}) {
  const packages = [];
  if (!nginxBinary()) packages.push(isRoot() && which('apt-get') ? nginxPackage() : 'nginx');
  if (!prometheusBinaries()) packages.push('prometheus');
  if (packages.length) {
    log(`unit tools: installing ${packages.join(', ')} with apt-get`);
    aptInstall(packages, log);
  }
  const prometheus = prometheusBinaries();
  if (!prometheus) throw new Error('prometheus: promtool/prometheus not found after installing it');
  if (!nginxBinary()) throw new Error('nginx: binary not found after installing it');
  return { NGINX_BIN: nginxBinary(), ...prometheus };
}

// ---------------------------------------------------------------------------------------
// Lock: two runs provisioning at once must not both start the same server.

async function withLock(fn, log) {
  const lock = path.join(os.tmpdir(), 'svc-provision.lock');
  const deadline = Date.now() + 10 * 60000;
  let said = false;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      fs.writeFileSync(path.join(lock, 'pid'), String(process.pid));
      break;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      let holder = 0;
      try {
        holder = Number(fs.readFileSync(path.join(lock, 'pid'), 'utf8'));
      } catch {
        /* being written */
      }
      let alive = false;
      try {
        if (holder) process.kill(holder, 0);
        alive = Boolean(holder);
      } catch {
        alive = false;
      }
      const age = Date.now() - fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs;
      if (!alive && (holder || age > 5000)) {
        fs.rmSync(lock, { recursive: true, force: true });
        continue;
      }
      if (!said) log(`services: another run (pid ${holder}) is provisioning; waiting`);
      said = true;
      if (Date.now() > deadline) throw new Error(`services: lock ${lock} held for over 10 minutes`);
      await sleep(500);
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------

/**
 * Provisions everything. Options: log (line printer), chromium (also ensure a Chromium binary).
 * Resolves {
 *   env: { DATABASE_URL, REDIS_URL, REDIS_CACHE_URL, AMQP_URL, NGINX_BIN, PROMETHEUS_BIN,
 *          PROMTOOL_BIN, CHROMIUM_BIN? },
 *   started: [{ name, stop() }],   // servers started by this call, in start order
 *   stopStarted(),                 // stops them, last started first
 * }
 */
async function provision({ log = (l) => console.log(l), chromium = false } = {}) {
  return withLock(async () => {
    const plans = {};
    for (const name of Object.keys(SPECS)) plans[name] = await plan(name, log);

    // Everything that must be installed, in one apt-get call.
    const packages = Object.values(plans)
      .filter((p) => p.mode === 'install')
      .map((p) => p.package);
    if (!nginxBinary()) {
      log('nginx: not installed');
      packages.push(isRoot() && which('apt-get') ? nginxPackage() : 'nginx');
    }
    if (chromium && !chromiumBinary()) {
      log('chromium: not installed (browser tests need it)');
      packages.push('chromium');
    }
    if (!prometheusBinaries()) {
      log('prometheus: not installed (the alert tests and the scrape test need it)');
      packages.push('prometheus');
    }
    if (packages.length) {
      for (const p of Object.values(plans))
        if (p.mode === 'install') log(`${p.name}: not installed; installing ${p.package} with apt-get`);
      aptInstall(packages, log);
      for (const p of Object.values(plans)) if (p.mode === 'install') p.mode = 'local';
    }

    const started = [];
    const start = async (p, localStart) => {
      if (p.mode === 'docker') {
        log(`${p.name}: starting it with docker compose (service ${p.service})`);
        const s = composeUp(p.service);
        started.push(s);
        await waitForPort('127.0.0.1', p.target.port, 120000, `${p.name} (compose service ${p.service})`);
      } else if (p.mode === 'local') {
        started.push(await localStart(p, log));
      }
    };
    // RabbitMQ is the slow one (~10 s); start the three side by side.
    const results = await Promise.allSettled([
      start(plans.postgres, startPostgres).then(() => readyPostgres(plans.postgres, log)),
      start(plans.redis, startRedis).then(() => readyRedis(plans.redis)),
      start(plans.redisCache, startRedis).then(() => readyRedis(plans.redisCache)),
      start(plans.rabbitmq, startRabbit),
    ]);
    const failures = results.filter((r) => r.status === 'rejected').map((r) => r.reason);
    const stopStarted = async () => {
      for (const s of [...started].reverse()) {
        log(`services: stopping ${s.name} (started by this run)`);
        await s.stop().catch((err) => log(`services: stopping ${s.name} failed: ${err.message}`));
      }
      started.length = 0;
    };
    if (failures.length) {
      await stopStarted();
      throw new Error(failures.map((f) => f.message).join('\n'));
    }

    const env = {
      DATABASE_URL: plans.postgres.url,
      REDIS_URL: plans.redis.url,
      REDIS_CACHE_URL: plans.redisCache.url,
      AMQP_URL: plans.rabbitmq.url,
      NGINX_BIN: nginxBinary(),
    };
    if (!env.NGINX_BIN) throw new Error('nginx: binary not found after installing it');
    log(`nginx: ${env.NGINX_BIN}`);
    const prometheus = prometheusBinaries();
    if (!prometheus) throw new Error('prometheus: promtool/prometheus not found after installing it');
    Object.assign(env, prometheus);
    log(`prometheus: ${prometheus.PROMETHEUS_BIN}, ${prometheus.PROMTOOL_BIN}`);
    if (chromium) {
      env.CHROMIUM_BIN = chromiumBinary();
      log(`chromium: ${env.CHROMIUM_BIN}`);
    }
    return { env, started, stopStarted };
  }, log);
}

/** A URL with its password masked, for messages. */
function redact(url) {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url;
  }
}

module.exports = {
  DEFAULTS,
  RABBIT_MANAGEMENT_PORT,
  provision,
  ensureUnitTools,
  redact,
  superPsql,
  isLocal,
  parseUrl,
  pgLogin,
};
