#!/usr/bin/env node
// `npm start`: the whole service on this machine, in sandbox mode.
//   1. installs npm packages when missing; 2. finds or starts PostgreSQL, Redis and RabbitMQ
//   (see scripts/lib/services.cjs), and nginx; 3. builds; 4. runs every app's migrations, then
//   its sandbox seed; 5. starts the five apps and the nginx gateway as separate processes, with
//   prefixed, coloured logs; 6. waits until each is ready and prints the base URL and the
//   sandbox credentials. Ctrl-C (or SIGTERM) stops every process it started, and the servers
//   it started itself; servers that were already running are left alone.
// REPLICAS=N (1..8, default 1) runs N processes of every app, replica i on its default port
//   + 100·i, all behind the gateway. Once everything is up, a process that dies is started
//   again after 1 s, as Kubernetes would, with a doubling delay (up to 30 s) while it keeps
//   crashing; a crash during start-up still stops everything.
// Every variable of the caller's environment reaches the apps (e.g.
//   WEBHOOK_RETRY_SCHEDULE=2s,2s,2s,2s,2s npm start).
// `npm run dev` (--watch) does the same, then rebuilds on every change under apps/ and libs/,
//   runs the migrations (a new one applies at once) and restarts the apps; the gateway keeps
//   running. A change to the gateway's generator or route table needs a fresh `npm run dev`.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
// On another Node than the project's, the script runs again on it (scripts/lib/node.cjs).
await require('./lib/node.cjs').onProjectNode();
const { ROOT, ensureNodeModules, folderProblem } = require('./lib/deps.cjs');

const {
  COLOURS,
  red,
  green,
  yellow,
  bold,
  startProcess,
  run,
  restartDelayMs,
  signalGroup,
} = require('./lib/procs.cjs');
const { tcpReachable, waitForHttpOk } = require('./lib/net.cjs');
const { provision } = require('./lib/services.cjs');
const {
  appConnections,
  cliConnections,
  ensureBrokerUsers,
  grantBrokerVhost,
} = require('./lib/credentials.cjs');
const { management } = require('./lib/isolation.cjs');
const apps = require('./lib/apps.cjs');

const say = (line) => console.log(line);
const shout = (line) => console.log(red(`\n!!! ${line}\n`));

const state = {
  phase: 'starting',
  children: [],
  servers: null,
  provisioning: null,
  /** One-shot commands in flight (build, migrate, seed): stopped too on Ctrl-C. */
  oneShots: new Set(),
  /** Processes waiting for their restart (their timers are cleared on stop). */
  restarts: new Set(),
  exitCode: 0,
  stopping: false,
};

async function main() {
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGHUP', () => shutdown('SIGHUP'));

  const folder = folderProblem();
  if (folder) throw new Error(folder);
  ensureNodeModules(say);
  const replicas = apps.parseReplicas(process.env.REPLICAS);
  const names = apps.writtenApps();
  const skipped = apps.NEST_APPS.filter((a) => !names.includes(a));
  if (skipped.length) say(yellow(`start: not written yet, not started: ${skipped.join(', ')}`));

  const gatewayPort = Number(process.env.GATEWAY_PORT || apps.DEFAULT_PORTS.gateway);
  const ports = Object.fromEntries(names.map((a) => [a, apps.DEFAULT_PORTS[a]]));
  /** Every process of every app: { app, replica, name, port }. */
  const instances = names.flatMap((app) =>
    Array.from({ length: replicas }, (_, i) => ({
      app,
      replica: i,
      name: replicas === 1 ? app : `${app}#${i + 1}`,
      port: apps.replicaPort(app, i),
      metricsPort: apps.replicaMetricsPort(app, i),
    })),
  );
  const busy = [];
  for (const [what, port] of [
    ...instances.flatMap((x) => [
      [x.name, x.port],
      [`${x.name} metrics`, x.metricsPort],
    ]),
    ['gateway', gatewayPort],
  ]) {
    if (await tcpReachable('127.0.0.1', port, 500)) busy.push(`${port} (${what})`);
  }
  if (busy.length)
    throw new Error(`port ${busy.join(', ')} already in use: is another \`npm start\` running?`);

  state.provisioning = provision({ log: say });
  state.servers = await state.provisioning;
  checkpoint();
  const { NGINX_BIN, ...services } = state.servers.env;
  // Each app's own broker user, limited to its exchanges and queues in the sandbox's vhost.
  const broker = management(services.AMQP_URL);
  await ensureBrokerUsers(broker, say);
  await grantBrokerVhost(broker, decodeURIComponent(new URL(services.AMQP_URL).pathname.slice(1)) || '/');

  say('build: compiling');
  const built = await run(process.execPath, [path.join(ROOT, 'scripts', 'build.mjs')], {
    cwd: ROOT,
    onStart: track,
  });
  if (built.code !== 0) throw new Error('build failed');
  apps.assertBuilt(names, { generator: true });
  checkpoint();

  const width = Math.max(...[...instances.map((x) => x.name), 'gateway'].map((n) => n.length));
  const colourOf = Object.fromEntries([...names, 'gateway'].map((n, i) => [n, COLOURS[i % COLOURS.length]]));
  const prefix = (name) => ({ name, width, colour: colourOf[name.split('#')[0]] });
  // Serving processes connect as the app's own role and broker user; its CLI (migrations, seed)
  // as the schemas' owner, granting the app's role its schema.
  const envOf = (app, port = ports[app], metricsPort = apps.DEFAULT_METRICS_PORTS[app]) =>
    apps.appEnv({
      app,
      services: { ...services, ...appConnections(app, services) },
      fixed: { PORT: port, METRICS_PORT: metricsPort },
      gatewayPort,
    });
  const cliEnvOf = (app) =>
    apps.appEnv({
      app,
      services: { ...services, ...cliConnections(app, services) },
      fixed: { PORT: ports[app] },
      gatewayPort,
    });

  for (const command of ['migrate', 'seed']) {
    for (const app of names) {
      say(`${command}: ${app}`);
      await apps.runCli(app, command, cliEnvOf(app), { prefix: prefix(app), onStart: track });
      checkpoint();
    }
  }

  const gatewayDir = path.join(ROOT, '.run', 'gateway');
  fs.rmSync(gatewayDir, { recursive: true, force: true });
  await apps.generateGateway(gatewayDir, {
    gatewayPort,
    ports: Object.fromEntries(
      names.map((app) => [
        app,
        instances
          .filter((x) => x.app === app)
          .map((x) => `127.0.0.1:${x.port}`)
          .join(','),
      ]),
    ),
    env: apps.appEnv({ services, gatewayPort }),
    prefix: prefix('gateway'),
    onStart: track,
  });

  state.phase = 'starting';
  const appSpecs = instances.map((x) => ({
    name: x.name,
    readyUrl: `http://127.0.0.1:${x.port}/readyz`,
    options: {
      name: x.name,
      cmd: process.execPath,
      args: [apps.mainJs(x.app)],
      env: envOf(x.app, x.port, x.metricsPort),
      cwd: ROOT,
      prefix: prefix(x.name),
    },
  }));
  const gatewaySpec = {
    name: 'gateway',
    readyUrl: `http://127.0.0.1:${gatewayPort}/healthz`,
    options: {
      name: 'gateway',
      cmd: NGINX_BIN,
      args: apps.nginxArgs(gatewayDir),
      env: process.env,
      cwd: gatewayDir,
      prefix: prefix('gateway'),
    },
  };
  for (const spec of [...appSpecs, gatewaySpec]) launch(spec);

  await Promise.all([
    ...appSpecs.map((spec) =>
      waitForHttpOk(spec.readyUrl, { timeoutMs: 90000, isAlive: spec.handle.alive, what: spec.name }),
    ),
    waitForHttpOk(gatewaySpec.readyUrl, {
      timeoutMs: 30000,
      isAlive: gatewaySpec.handle.alive,
      what: 'gateway',
    }),
  ]);
  checkpoint();
  state.phase = 'running';
  banner(gatewayPort, envOf(names[0] || 'crew-api'), { replicas, instances });
  if (process.argv.includes('--watch')) watchSources(appSpecs, { names, cliEnvOf, prefix });
}

/** Rebuilds and restarts the apps when a source file changes (`npm run dev`). */
function watchSources(appSpecs, { names, cliEnvOf, prefix }) {
  let timer = null;
  let running = null;
  let again = false;
  const rebuild = async () => {
    if (running) {
      again = true;
      return;
    }
    running = (async () => {
      say(yellow('dev: a source changed; rebuilding'));
      const built = await run(process.execPath, [path.join(ROOT, 'scripts', 'build.mjs')], {
        cwd: ROOT,
        onStart: track,
      });
      if (state.stopping) return;
      if (built.code !== 0)
        return say(red('dev: the build failed; the apps keep running the last good build'));
      for (const app of names)
        await apps.runCli(app, 'migrate', cliEnvOf(app), { prefix: prefix(app), onStart: track });
      await Promise.all(appSpecs.map((spec) => spec.handle.stop(10000)));
      if (state.stopping) return;
      for (const spec of appSpecs) launch(spec);
      await Promise.all(
        appSpecs.map((spec) =>
          waitForHttpOk(spec.readyUrl, { timeoutMs: 90000, isAlive: spec.handle.alive, what: spec.name }),
        ),
      );
      say(green('dev: rebuilt and restarted; watching apps/ and libs/'));
    })()
      .catch((err) => say(red(`dev: ${err.message}`)))
      .finally(() => {
        running = null;
        if (again && !state.stopping) {
          again = false;
          void rebuild();
        }
      });
  };
  for (const dir of ['apps', 'libs']) {
    fs.watch(path.join(ROOT, dir), { recursive: true }, (_event, file) => {
      if (
        !file ||
        !/\.(ts|json|css|html|md)$/.test(file) ||
        /\.(spec|integration-spec|e2e-spec)\.ts$/.test(file)
      )
        return;
      clearTimeout(timer);
      timer = setTimeout(() => void rebuild(), 300);
    });
  }
  say(green('dev: watching apps/ and libs/; a change rebuilds and restarts the apps'));
}

/** A process of the sandbox: started, and restarted when it dies once start-up is over. */
function launch(spec) {
  const handle = startProcess({
    ...spec.options,
    onExit: (code, signal, h) => exited(spec, code, signal, h),
  });
  const before = state.children.indexOf(spec.handle);
  if (before >= 0) state.children[before] = handle;
  else state.children.push(handle);
  spec.handle = handle;
  spec.startedAt = Date.now();
  return handle;
}

/** After this long up, a process that dies again counts as a fresh crash, not a crash loop. */
const STABLE_AFTER_MS = 60000;

function exited(spec, code, signal, handle) {
  if (state.stopping || handle.stopping || handle !== spec.handle) return;
  const how = signal ? `signal ${signal}` : `exit code ${code}`;
  if (state.phase === 'starting') {
    shout(`${spec.name} exited unexpectedly (${how}); its last lines are above`);
    state.exitCode = 1;
    shutdown('start-up failure');
    return;
  }
  // Whatever is left of its process group dies with it, as a container's processes do: a process
  // orphaned by its dead wrapper would keep the port, and every restart would fail on EADDRINUSE.
  if (handle.pid) signalGroup(handle.pid, 'SIGKILL');
  // Like a kubelet: restart at once-ish, back off while it keeps crashing.
  spec.crashes = Date.now() - spec.startedAt >= STABLE_AFTER_MS ? 1 : (spec.crashes || 0) + 1;
  const delay = restartDelayMs(spec.crashes);
  shout(
    `${spec.name} exited unexpectedly (${how}); restarting it in ${delay / 1000} s` +
      (spec.crashes > 1 ? ` (${spec.crashes} crashes in a row)` : ''),
  );
  spec.timer = setTimeout(() => {
    state.restarts.delete(spec);
    if (state.stopping) return;
    const h = launch(spec);
    waitForHttpOk(spec.readyUrl, { timeoutMs: 90000, isAlive: h.alive, what: spec.name }).then(
      () => say(green(`start: ${spec.name} restarted and ready`)),
      () => undefined, // it died again or never got ready: exited() has it
    );
  }, delay);
  state.restarts.add(spec);
}

function track(handle) {
  state.oneShots.add(handle);
  handle.exited.then(() => state.oneShots.delete(handle));
}

/** Throws when a shutdown was asked for while we were still starting. */
function checkpoint() {
  if (state.stopping) throw new Error('interrupted');
}

const SANDBOX_PARTNERS = [
  ['client_id', 'client_secret', 'scopes', 'redirect URIs', 'sponsorship', 'member-left', 'suspended'],
  [
    'sandbox-partner',
    'sandbox-secret',
    'profile:read seatime:read vessels:read',
    'http://localhost:8765/callback, http://127.0.0.1:8765/callback, https://partner.example/callback',
    'yes',
    'yes',
    'no',
  ],
  [
    'sandbox-partner-b',
    'sandbox-secret-b',
    'profile:read',
    'http://localhost:8766/callback',
    'yes',
    'no',
    'no',
  ],
  [
    'sandbox-partner-suspended',
    'sandbox-secret-suspended',
    'profile:read seatime:read vessels:read',
    'http://localhost:8767/callback',
    'yes',
    'no',
    'yes',
  ],
];
const SANDBOX_CREW = [
  ['email', 'password', 'record'],
  [
    'alex.morgan@sandbox.test',
    'sandbox-password',
    '120 vessel periods, 8+ vessels; premium via an active seat of sandbox-partner',
  ],
  [
    'sam.lee@sandbox.test',
    'sandbox-password',
    '3 vessel periods; self-paid premium, also an active seat of sandbox-partner',
  ],
  ['jo.kim@sandbox.test', 'sandbox-password', 'empty record, free tier'],
];

function table(rows) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows
    .map((r, n) => {
      const line = `  ${r.map((c, i) => c.padEnd(widths[i])).join('  ')}`.trimEnd();
      return n === 0 ? bold(line) : line;
    })
    .join('\n');
}

function banner(gatewayPort, env, { replicas, instances }) {
  const base = `http://localhost:${gatewayPort}`;
  const webhook = env.SANDBOX_WEBHOOK_URL || 'http://127.0.0.1:8765/webhooks';
  const appNames = [...new Set(instances.map((x) => x.app))];
  const portsOf = (app, key = 'port') =>
    instances
      .filter((x) => x.app === app)
      .map((x) => x[key])
      .join(', ');
  say(
    [
      '',
      green(bold(`The crew-record service is up (APP_ENV=${env.APP_ENV}).`)),
      `  base URL:   ${bold(base)}`,
      `  replicas:   ${replicas} of every app (REPLICAS), behind the gateway; ports: ${appNames
        .map((app) => `${app} ${portsOf(app)}`)
        .join('; ')}`,
      `  metrics:    http://localhost:<port>/metrics, never through the gateway; ports: ${appNames
        .map((app) => `${app} ${portsOf(app, 'metricsPort')}`)
        .join('; ')}`,
      `  docs:       ${base}/docs/   (OpenAPI: ${base}/openapi.json, ${base}/openapi.yaml)`,
      ...(env.APP_ENV === 'sandbox'
        ? sandboxCredentials(base, webhook, env)
        : ['', `APP_ENV=${env.APP_ENV}: nothing was seeded.`]),
      '',
      'Press Ctrl-C to stop everything this command started.',
      '',
    ].join('\n'),
  );
}

function sandboxCredentials(base, webhook, env) {
  return [
    `  internal:   ${base}/internal/v1/...  Authorization: Bearer ${env.INTERNAL_API_TOKEN || 'sandbox-internal-token'}`,
    '',
    bold('Sandbox partners'),
    table(SANDBOX_PARTNERS),
    `  sandbox-partner's webhook URL: ${webhook} (secret whsec_sandbox_secret)`,
    `  seats: sandbox-partner has alex.morgan and sam.lee active and 4 invited (invitee1..4@sandbox.test,`,
    `         ext-1..4); sandbox-partner-b has 2 invited. Try: curl -u sandbox-partner:sandbox-secret ${base}/v1/partners/sponsorships`,
    '',
    bold('Sandbox crew members'),
    table(SANDBOX_CREW),
  ];
}

let forced = false;
async function shutdown(reason) {
  if (state.stopping) {
    if (!forced && (reason === 'SIGINT' || reason === 'SIGTERM')) {
      forced = true;
      say(yellow('start: stopping at once (SIGKILL)'));
      for (const c of [...state.children, ...state.oneShots]) c.stop(0);
    }
    return;
  }
  state.stopping = true;
  for (const spec of state.restarts) clearTimeout(spec.timer);
  state.restarts.clear();
  if (reason !== 'start-up failure' && reason !== 'error') say(yellow(`\nstart: ${reason}: stopping`));
  // The gateway first (no new requests), then the apps; each gets SIGTERM, then SIGKILL after 10 s.
  const gateway = state.children.filter((c) => c.name === 'gateway');
  const rest = state.children.filter((c) => c.name !== 'gateway');
  await Promise.all(gateway.map((c) => c.stop(10000)));
  await Promise.all([...rest, ...state.oneShots].map((c) => c.stop(10000)));
  if (state.children.length) say('start: every app and the gateway have stopped');
  // Servers still being started when we were interrupted are stopped once they are up.
  if (!state.servers && state.provisioning) state.servers = await state.provisioning.catch(() => null);
  if (state.servers) await state.servers.stopStarted();
  process.exit(state.exitCode || (reason === 'start-up failure' || reason === 'error' ? 1 : 0));
}

main().catch(async (err) => {
  // Once stopping, later errors are consequences of the stop (a process we killed while waiting for it).
  if (!state.stopping) {
    shout(`start failed: ${err.message}`);
    state.exitCode = 1;
  }
  await shutdown('error');
});
