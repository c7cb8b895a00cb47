'use strict';
// Per-run isolation of a test run: its own PostgreSQL database, RabbitMQ vhost and Redis key
// prefix, so that two runs never collide and no run depends on what an earlier one left.
// Everything is removed at the end (also on failure); leftovers of runs that were killed are
// removed by a later run once they are older than STALE_AFTER_MS.
const { capture, which } = require('./procs.cjs');
const { httpRequest, redisCommands } = require('./net.cjs');
const { RABBIT_MANAGEMENT_PORT, superPsql, isLocal, parseUrl, redact } = require('./services.cjs');
const { ensureBrokerUsers, grantBrokerVhost } = require('./credentials.cjs');

const PREFIX = 'svc_test_';
const STALE_AFTER_MS = 6 * 3600 * 1000;

/** A run id usable as a database name, vhost and key part: <base36 ms>_<random>. */
function newRunId() {
  return `${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8).padEnd(6, '0')}`;
}

const startedAt = (name) => parseInt(name.slice(PREFIX.length).split('_')[0], 36) || 0;
const isStale = (name) => name.startsWith(PREFIX) && Date.now() - startedAt(name) > STALE_AFTER_MS;

function withPath(rawUrl, pathname) {
  const u = new URL(rawUrl);
  u.pathname = pathname;
  return u.toString();
}

// ---- PostgreSQL ------------------------------------------------------------------------

async function pgQuery(url, sql) {
  const { Client } = require('pg');
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function createDatabase(baseUrl, name, log) {
  const target = parseUrl(baseUrl, 5432);
  const owner = decodeURIComponent(target.url.username || 'svc');
  try {
    await pgQuery(baseUrl, `CREATE DATABASE "${name}"`);
  } catch (err) {
    // A role without CREATEDB on a local cluster: create it as the superuser, owned by the role.
    const res = isLocal(target.host)
      ? superPsql(target.port, `CREATE DATABASE "${name}" OWNER "${owner.replace(/"/g, '""')}"`)
      : null;
    if (!res || res.status !== 0) {
      throw new Error(
        `cannot create database ${name} with ${redact(baseUrl)} (${err.message}); the role needs CREATEDB`,
      );
    }
  }
  log(`isolation: database ${name}`);
}

async function dropDatabase(baseUrl, name) {
  await pgQuery(baseUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
}

async function dropStaleDatabases(baseUrl, log) {
  const res = await pgQuery(baseUrl, `SELECT datname FROM pg_database WHERE datname LIKE 'svc\\_test\\_%'`);
  for (const { datname } of res.rows) {
    if (!isStale(datname)) continue;
    await dropDatabase(baseUrl, datname).then(
      () => log(`isolation: dropped stale database ${datname}`),
      () => undefined,
    );
  }
}

// ---- RabbitMQ --------------------------------------------------------------------------

function management(amqpUrl) {
  const u = new URL(amqpUrl);
  const user = decodeURIComponent(u.username || 'guest');
  const pass = decodeURIComponent(u.password || 'guest');
  const host = u.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1';
  const port = Number(process.env.RABBITMQ_MANAGEMENT_PORT || RABBIT_MANAGEMENT_PORT);
  const auth = `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
  const call = async (method, apiPath, body) => {
    const res = await httpRequest(`http://${host.includes(':') ? `[${host}]` : host}:${port}/api${apiPath}`, {
      method,
      headers: { authorization: auth, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      timeoutMs: 10000,
    });
    if (res.status >= 300 && !(method === 'DELETE' && res.status === 404)) {
      throw new Error(`${method} /api${apiPath}: HTTP ${res.status} ${res.body.slice(0, 200)}`);
    }
    return res.body ? JSON.parse(res.body) : undefined;
  };
  return { user, host, call, local: isLocal(host) };
}

const PERMS = { configure: '.*', write: '.*', read: '.*' };

async function createVhost(amqpUrl, vhost, log) {
  const m = management(amqpUrl);
  const enc = encodeURIComponent(vhost);
  try {
    await m.call('PUT', `/vhosts/${enc}`, {});
    await m.call('PUT', `/permissions/${enc}/${encodeURIComponent(m.user)}`, PERMS);
    log(`isolation: vhost ${vhost} (management API)`);
    return 'http';
  } catch (err) {
    if (!isLocal(m.host) || !which('rabbitmqctl'))
      throw new Error(`cannot create vhost ${vhost}: ${err.message}`);
    const add = capture('rabbitmqctl', ['add_vhost', vhost], { timeoutMs: 60000 });
    const perm = capture('rabbitmqctl', ['set_permissions', '-p', vhost, m.user, '.*', '.*', '.*'], {
      timeoutMs: 60000,
    });
    if (add.status !== 0 || perm.status !== 0) {
      throw new Error(
        `cannot create vhost ${vhost}: ${err.message}; rabbitmqctl: ${add.stderr}${perm.stderr}`,
      );
    }
    log(`isolation: vhost ${vhost} (rabbitmqctl)`);
    return 'ctl';
  }
}

async function deleteVhost(amqpUrl, vhost) {
  const m = management(amqpUrl);
  try {
    await m.call('DELETE', `/vhosts/${encodeURIComponent(vhost)}`);
  } catch (err) {
    if (!isLocal(m.host) || !which('rabbitmqctl')) throw err;
    const res = capture('rabbitmqctl', ['delete_vhost', vhost], { timeoutMs: 60000 });
    if (res.status !== 0 && !/does not exist|no_such_vhost/i.test(res.stderr + res.stdout)) throw err;
  }
}

async function deleteStaleVhosts(amqpUrl, log) {
  let names = [];
  try {
    names = ((await management(amqpUrl).call('GET', '/vhosts?columns=name')) || []).map((v) => v.name);
  } catch {
    return; // best effort
  }
  for (const name of names.filter(isStale)) {
    await deleteVhost(amqpUrl, name).then(
      () => log(`isolation: deleted stale vhost ${name}`),
      () => undefined,
    );
  }
}

// ---- Redis -----------------------------------------------------------------------------

const DELETE_BY_PATTERN =
  "local n = 0 for _, k in ipairs(redis.call('KEYS', ARGV[1])) do redis.call('UNLINK', k) n = n + 1 end return n";

async function deleteKeys(redisUrl, prefix) {
  const pattern = `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
  const [count] = await redisCommands(redisUrl, [['EVAL', DELETE_BY_PATTERN, '0', pattern]], 30000);
  return count;
}

// ---------------------------------------------------------------------------------------

/**
 * Creates the run's database, vhost and key prefix on the servers of baseEnv
 * ({ DATABASE_URL, AMQP_URL, REDIS_URL, REDIS_CACHE_URL? }). Resolves { runId, env, cleanup() } where env
 * holds DATABASE_URL, AMQP_URL, REDIS_URL, REDIS_CACHE_URL, REDIS_KEY_PREFIX and TEST_RUN_ID for the test processes.
 * cleanup() never throws; it reports what it could not remove.
 */
async function createRunResources(baseEnv, { runId = newRunId(), log = (l) => console.log(l) } = {}) {
  const name = `${PREFIX}${runId}`;
  const prefix = `test:${runId}:`;
  await dropStaleDatabases(baseEnv.DATABASE_URL, log).catch(() => undefined);
  await deleteStaleVhosts(baseEnv.AMQP_URL, log);

  const undo = [];
  const cleanup = async () => {
    for (const [what, fn] of undo.reverse()) {
      try {
        await fn();
        log(`isolation: removed ${what}`);
      } catch (err) {
        log(`isolation: could not remove ${what}: ${err.message}`);
      }
    }
    undo.length = 0;
  };
  try {
    await createDatabase(baseEnv.DATABASE_URL, name, log);
    undo.push([`database ${name}`, () => dropDatabase(baseEnv.DATABASE_URL, name)]);
    await createVhost(baseEnv.AMQP_URL, name, log);
    undo.push([`vhost ${name}`, () => deleteVhost(baseEnv.AMQP_URL, name)]);
    // Each app's own broker user, limited to its exchanges and queues in this vhost.
    const m = management(baseEnv.AMQP_URL);
    await ensureBrokerUsers(m, log);
    await grantBrokerVhost(m, name);
    undo.push([`redis keys ${prefix}*`, () => deleteKeys(baseEnv.REDIS_URL, prefix)]);
    if (baseEnv.REDIS_CACHE_URL)
      undo.push([`cache redis keys ${prefix}*`, () => deleteKeys(baseEnv.REDIS_CACHE_URL, prefix)]);
    log(`isolation: redis key prefix ${prefix}`);
  } catch (err) {
    await cleanup();
    throw err;
  }
  return {
    runId,
    env: {
      TEST_RUN_ID: runId,
      DATABASE_URL: withPath(baseEnv.DATABASE_URL, `/${name}`),
      AMQP_URL: withPath(baseEnv.AMQP_URL, `/${encodeURIComponent(name)}`),
      REDIS_URL: baseEnv.REDIS_URL,
      REDIS_CACHE_URL: baseEnv.REDIS_CACHE_URL,
      REDIS_KEY_PREFIX: prefix,
    },
    cleanup,
  };
}

/**
 * A vhost of one test file's own beside the run's (`<run vhost>_<label>`, so a killed run's is
 * stale with it), on the same users and grants. A file whose assertions count what its dispatcher
 * did needs it: on the run's shared vhost, retries that earlier files' failing endpoints left in
 * the queues reach whichever dispatcher is running. Resolves { url, remove() }.
 */
async function createSuiteVhost(amqpUrl, label, log = () => undefined) {
  const u = new URL(amqpUrl);
  const runVhost = decodeURIComponent(u.pathname.slice(1));
  if (!runVhost.startsWith(PREFIX)) throw new Error(`not a test run's vhost: ${redact(amqpUrl)}`);
  const name = `${runVhost}_${label}_${Math.random().toString(36).slice(2, 6)}`;
  await createVhost(amqpUrl, name, log);
  try {
    await grantBrokerVhost(management(amqpUrl), name);
  } catch (err) {
    await deleteVhost(amqpUrl, name).catch(() => undefined);
    throw err;
  }
  return { url: withPath(amqpUrl, `/${encodeURIComponent(name)}`), remove: () => deleteVhost(amqpUrl, name) };
}

module.exports = { newRunId, createRunResources, createSuiteVhost, deleteKeys, management, PREFIX };
