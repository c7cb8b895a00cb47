'use strict';
// Least privilege between the apps, for `npm start` and `npm test`: each app connects to
// PostgreSQL as its own login role and to RabbitMQ as its own user. The schemas belong to the
// role of DATABASE_URL as provisioning finds it (the migrations run as that owner and grant each
// app's role its own schema only, `cli.js migrate` with DATABASE_APP_ROLE); the broker users get
// permissions on their own exchanges and queues only.
//
// Roles and users are cluster-wide (broker-wide), shared by every run on the machine: names are
// fixed and creation is idempotent, nothing here ever drops or deletes one. The passwords are
// published sandbox values (like the partners' sandbox secrets); production has its own, from its
// secret store (compose and k8s/ provision theirs).
const { capture, which } = require('./procs.cjs');

/**
 * Per app: its schema, PostgreSQL role and RabbitMQ user, and the broker permissions (regexes on
 * resource names, per vhost). `amq.default` is the default exchange: RPC requests and replies
 * (the RPC server's queue and direct reply-to) and dead-lettering to a queue go through it.
 * `amq.rabbitmq.reply-to` is the direct reply-to pseudo-queue an RPC caller consumes. RabbitMQ checks
 * no routing key on the default exchange, so any app here may publish to any RPC queue: the RPC
 * servers answer only the callers each contract names, by the broker user (`svc-<app>`, the name
 * `appOfBrokerUser` in libs/contracts knows) that RabbitMQ vouches for in a request's `user_id`.
 *
 * `topics`: RabbitMQ's topic permissions on a topic exchange, for the apps that may write to it or
 * read from it. `publishes` are the routing keys the app may publish with (every message on
 * crew.events, a packed one too, has its event type as routing key), `binds` the binding keys it may
 * bind (and unbind) its queues with; each becomes an anchored regex of literal keys (topicPermissions).
 * The keys are typed here (plain CommonJS cannot import libs/contracts): test/deploy/topic-permissions.spec.ts
 * checks them against EVENT_TYPES and MEMBER_REGISTERED, test/deploy/least-privilege.integration-spec.ts
 * against a real broker.
 */
const CREW_EVENTS = 'crew.events';
const WEBHOOK_EVENT_TYPES = [
  'user.profile.updated',
  'user.sea_time.updated',
  'user.vessels.updated',
  'user.consent.revoked',
  'webhook.test',
];
const MEMBER_REGISTERED = 'crew.member.registered';

const APPS = {
  'auth-server': {
    schema: 'auth',
    amqp: {
      configure: '^(rpc\\.auth-server|crew\\.events)$',
      write: '^(amq\\.default|crew\\.events)$',
      read: '^rpc\\.auth-server$',
    },
    // The consent it ends (ConsentsService.end).
    topics: [{ exchange: CREW_EVENTS, publishes: ['user.consent.revoked'], binds: [] }],
  },
  'consent-ui': {
    schema: 'consent',
    amqp: { configure: '^$', write: '^amq\\.default$', read: '^amq\\.rabbitmq\\.reply-to$' },
  },
  'crew-api': {
    schema: 'crew',
    amqp: {
      configure: '^(rpc\\.crew-api|crew\\.events)$',
      write: '^(amq\\.default|crew\\.events)$',
      read: '^(rpc\\.crew-api|amq\\.rabbitmq\\.reply-to)$',
    },
    // Record events (RecordWriter), the webhook test, and the registration sponsorship-api reads.
    topics: [
      {
        exchange: CREW_EVENTS,
        publishes: [...WEBHOOK_EVENT_TYPES.filter((t) => t !== 'user.consent.revoked'), MEMBER_REGISTERED],
        binds: [],
      },
    ],
  },
  // The consumers also declare crew.events (configure), so they start in any order.
  'sponsorship-api': {
    schema: 'sponsorship',
    amqp: {
      configure: '^(rpc\\.sponsorship-api|sponsorship\\..+|crew\\.events)$',
      write: '^(amq\\.default|sponsorship\\..+)$',
      read: '^(rpc\\.sponsorship-api|sponsorship\\..+|crew\\.events|amq\\.rabbitmq\\.reply-to)$',
    },
    topics: [{ exchange: CREW_EVENTS, publishes: [], binds: [MEMBER_REGISTERED] }],
  },
  'webhook-dispatcher': {
    schema: 'webhooks',
    amqp: {
      configure: '^(webhooks\\..+|crew\\.events)$',
      write: '^(amq\\.default|webhooks\\..+)$',
      read: '^(webhooks\\..+|crew\\.events|amq\\.rabbitmq\\.reply-to)$',
    },
    // The webhook event types only: never `#`, nor the internal crew.member.registered.
    topics: [{ exchange: CREW_EVENTS, publishes: [], binds: WEBHOOK_EVENT_TYPES }],
  },
};

const escapeRegex = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** An anchored regex matching exactly `keys` (none: `^$`, which no event's routing key matches). */
const exactly = (keys) => (keys.length === 0 ? '^$' : `^(${keys.map(escapeRegex).join('|')})$`);

/** `app`'s topic permissions, as RabbitMQ takes them: `{exchange, write, read}` per topic exchange. */
function topicPermissions(app) {
  return (APPS[app].topics ?? []).map(({ exchange, publishes, binds }) => ({
    exchange,
    write: exactly(publishes),
    read: exactly(binds),
  }));
}

/** The app that publishes `routingKey` on `exchange` (the one whose topic permission lets it). */
function publisherOf(exchange, routingKey) {
  const app = Object.keys(APPS).find((a) =>
    (APPS[a].topics ?? []).some((t) => t.exchange === exchange && t.publishes.includes(routingKey)),
  );
  if (!app) throw new Error(`no app publishes ${routingKey} on ${exchange}`);
  return app;
}

const pgRole = (app) => `svc_${APPS[app].schema}`;
const pgPassword = (app) => `sandbox-postgres-${APPS[app].schema}-password`;
const amqpUser = (app) => `svc-${app}`;
const amqpPassword = (app) => `sandbox-rabbitmq-${app}-password`;

function withUser(rawUrl, user, password) {
  const u = new URL(rawUrl);
  u.username = encodeURIComponent(user);
  u.password = encodeURIComponent(password);
  return u.toString();
}

/** The administrator's broker URL (one node) as `app`'s own user. */
function appBrokerUrl(app, amqpUrl) {
  return withUser(amqpUrl, amqpUser(app), amqpPassword(app));
}

/** What a serving process of `app` connects with, given the owner's/administrator's URLs. */
function appConnections(app, { DATABASE_URL, AMQP_URL }) {
  if (!APPS[app]) return {};
  return {
    DATABASE_URL: withUser(DATABASE_URL, pgRole(app), pgPassword(app)),
    AMQP_URL: appBrokerUrl(app, AMQP_URL),
  };
}

/**
 * What `cli.js migrate|seed` of `app` connects with: the owner's DATABASE_URL (DDL, and the grant to
 * the app's role) and the app's own broker user.
 */
function cliConnections(app, { DATABASE_URL, AMQP_URL }) {
  if (!APPS[app]) return {};
  return {
    DATABASE_URL,
    DATABASE_APP_ROLE: pgRole(app),
    AMQP_URL: withUser(AMQP_URL, amqpUser(app), amqpPassword(app)),
  };
}

// ---- PostgreSQL ------------------------------------------------------------------------

const sqlLiteral = (s) => `'${String(s).replace(/'/g, "''")}'`;
const sqlIdent = (s) => `"${String(s).replace(/"/g, '""')}"`;

/** One idempotent statement creating every app's login role (no other attribute, no membership). */
function createRolesSql() {
  return Object.keys(APPS)
    .map(
      (app) =>
        `DO $$ BEGIN CREATE ROLE ${sqlIdent(pgRole(app))} LOGIN NOINHERIT PASSWORD ${sqlLiteral(pgPassword(app))};` +
        ' EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$;',
    )
    .join('\n');
}

/**
 * Creates the apps' roles: as the postgres superuser over the local socket when `superPsql` can,
 * else as the owner of DATABASE_URL (which then needs CREATEROLE). An existing role is left as it is.
 */
async function ensurePgRoles(databaseUrl, { superPsql, port, log = () => undefined }) {
  const sql = createRolesSql();
  const viaSuper = superPsql ? superPsql(port, sql) : null;
  if (viaSuper && viaSuper.status === 0) {
    log(`postgres: app roles ${Object.keys(APPS).map(pgRole).join(', ')} ready`);
    return;
  }
  const { Client } = require('pg');
  const client = new Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    await client.query(sql);
    log(`postgres: app roles ${Object.keys(APPS).map(pgRole).join(', ')} ready`);
  } catch (err) {
    throw new Error(
      `postgres: cannot create the apps' roles (${err.message}); the role of DATABASE_URL needs CREATEROLE`,
    );
  } finally {
    await client.end().catch(() => undefined);
  }
}

// ---- RabbitMQ --------------------------------------------------------------------------

/**
 * Creates the apps' broker users (no tags: no management access) when missing, with `call` a
 * management API client (isolation.cjs), or rabbitmqctl on a local broker.
 */
async function ensureBrokerUsers(m, log = () => undefined) {
  for (const app of Object.keys(APPS)) {
    const user = amqpUser(app);
    const path = `/users/${encodeURIComponent(user)}`;
    try {
      const known = await m.call('GET', path).then(
        () => true,
        (err) => (/HTTP 404/.test(err.message) ? false : Promise.reject(err)),
      );
      if (!known) await m.call('PUT', path, { password: amqpPassword(app), tags: '' });
    } catch (err) {
      if (!m.local || !which('rabbitmqctl')) throw err;
      const res = capture('rabbitmqctl', ['add_user', user, amqpPassword(app)], { timeoutMs: 60000 });
      if (res.status !== 0 && !/already exists|user_already_exists/i.test(res.stderr + res.stdout)) {
        throw new Error(`rabbitmq: cannot create user ${user}: ${err.message}; rabbitmqctl: ${res.stderr}`);
      }
    }
  }
  log(`rabbitmq: app users ${Object.keys(APPS).map(amqpUser).join(', ')} ready`);
}

/** Gives every app user its permissions, and its topic permissions, on `vhost`. */
async function grantBrokerVhost(m, vhost) {
  for (const [app, { amqp }] of Object.entries(APPS)) {
    const user = amqpUser(app);
    const at = `${encodeURIComponent(vhost)}/${encodeURIComponent(user)}`;
    const grants = [
      [
        () => m.call('PUT', `/permissions/${at}`, amqp),
        ['set_permissions', '-p', vhost, user, amqp.configure, amqp.write, amqp.read],
      ],
      ...topicPermissions(app).map((t) => [
        () => m.call('PUT', `/topic-permissions/${at}`, t),
        ['set_topic_permissions', '-p', vhost, user, t.exchange, t.write, t.read],
      ]),
    ];
    for (const [viaApi, ctlArgs] of grants) {
      try {
        await viaApi();
      } catch (err) {
        if (!m.local || !which('rabbitmqctl')) throw err;
        const res = capture('rabbitmqctl', ctlArgs, { timeoutMs: 60000 });
        if (res.status !== 0) {
          throw new Error(`rabbitmq: cannot grant ${user} on ${vhost} (${ctlArgs[0]}): ${res.stderr}`);
        }
      }
    }
  }
}

module.exports = {
  APPS,
  topicPermissions,
  publisherOf,
  pgRole,
  amqpUser,
  amqpPassword,
  appBrokerUrl,
  appConnections,
  cliConnections,
  ensurePgRoles,
  ensureBrokerUsers,
  grantBrokerVhost,
};
