import { randomBytes } from 'node:crypto';
import * as amqp from 'amqplib';
import { Client } from 'pg';
import {
  AUTH_WEBHOOK_RECIPIENTS_BATCH,
  AUTH_WEBHOOK_TARGET,
  CREW_EVENTS_EXCHANGE,
  EVENT_TYPES,
  MEMBER_REGISTERED,
  type RpcContract,
} from '@svc/contracts';
import { AmqpConnection, createLogger, RPC_QUEUE_OPTIONS, RpcClient, RpcRemoteError } from '@svc/platform';
import { APPS, amqpUser, appConnections, pgRole } from '../../scripts/lib/credentials.cjs';
import { startAuthServer, type AuthServerHarness } from '../support/starters/auth-server';
import { testServices } from '../support/services';
import { createSuiteVhost } from '../../scripts/lib/isolation.cjs';

/**
 * Least privilege between the apps, against this run's database and vhost as `npm test` provisions
 * them (the same code as `npm start`): each app's PostgreSQL role reaches its own schema's rows
 * only, each app's broker user consumes its own queues only and publishes and binds on crew.events
 * only the event types it publishes and consumes (topic permissions), and partners' webhook signing
 * secrets are answered to the dispatcher's broker user alone.
 */
// In-process auth-server and fresh broker connections: slow on a busy 2-core machine.
jest.setTimeout(60_000);

const services = testServices();
const owner = { DATABASE_URL: services.databaseUrl, AMQP_URL: services.amqpUrl };
const APP_NAMES = Object.keys(APPS);

async function connectAs(app: string): Promise<Client> {
  const client = new Client({ connectionString: appConnections(app, owner).DATABASE_URL });
  await client.connect();
  return client;
}

async function sqlState(client: Client, sql: string): Promise<string> {
  try {
    await client.query(sql);
    return 'ok';
  } catch (err) {
    return (err as { code?: string }).code ?? String(err);
  }
}

describe('PostgreSQL: one role per app, limited to its schema', () => {
  /** One table of each app's schema (not the migrations table), as the owner sees them. */
  const tableOf: Record<string, string> = {};

  beforeAll(async () => {
    const ownerClient = new Client({ connectionString: services.databaseUrl });
    await ownerClient.connect();
    try {
      const { rows } = await ownerClient.query<{ schemaname: string; tablename: string }>(
        `SELECT schemaname, min(tablename) AS tablename FROM pg_tables
          WHERE schemaname = ANY($1) AND tablename <> 'migrations' GROUP BY schemaname`,
        [APP_NAMES.map((a) => APPS[a].schema)],
      );
      for (const r of rows) tableOf[r.schemaname] = `"${r.schemaname}"."${r.tablename}"`;
    } finally {
      await ownerClient.end();
    }
    expect(Object.keys(tableOf).sort()).toEqual(APP_NAMES.map((a) => APPS[a].schema).sort());
  });

  it.each(APP_NAMES)("%s's role reads its own schema and is refused every other (42501)", async (app) => {
    const client = await connectAs(app);
    try {
      const { rows } = await client.query<{ current_user: string }>('SELECT current_user');
      expect(rows[0].current_user).toBe(pgRole(app));
      expect(await sqlState(client, `SELECT count(*) FROM ${tableOf[APPS[app].schema]}`)).toBe('ok');
      for (const other of APP_NAMES.filter((a) => a !== app)) {
        expect([
          other,
          await sqlState(client, `SELECT 1 FROM ${tableOf[APPS[other].schema]} LIMIT 1`),
        ]).toEqual([other, '42501']);
      }
    } finally {
      await client.end();
    }
  });

  it("leaves DDL and the migrations' bookkeeping to the owner", async () => {
    const client = await connectAs('crew-api');
    try {
      expect(await sqlState(client, 'CREATE TABLE crew.intruder (id int)')).toBe('42501');
      expect(await sqlState(client, 'DROP TABLE ' + tableOf.crew)).toBe('42501');
      expect(await sqlState(client, 'DELETE FROM crew.migrations')).toBe('42501');
      expect(await sqlState(client, 'CREATE TABLE public.intruder (id int)')).toBe('42501');
    } finally {
      await client.end();
    }
  });
});

describe('RabbitMQ: one user per app, limited to its exchanges and queues', () => {
  const brokerUrl = (app: string) => appConnections(app, owner).AMQP_URL!;
  let admin: amqp.ChannelModel;
  const queues: string[] = [];

  beforeAll(async () => {
    admin = await amqp.connect(services.amqpUrl);
  });

  afterAll(async () => {
    const ch = await admin.createChannel();
    for (const q of queues) await ch.deleteQueue(q);
    await admin.close();
  });

  /** A queue the administrator declares under a name of `prefix` (e.g. the dispatcher's `webhooks.`). */
  async function queueNamed(prefix: string): Promise<string> {
    const name = `${prefix}lp-${randomBytes(4).toString('hex')}`;
    const ch = await admin.createChannel();
    await ch.assertQueue(name, { durable: false, autoDelete: false });
    await ch.close();
    queues.push(name);
    return name;
  }

  /** Consumes `queue` as `app`'s user: 'ok' or the broker's reply code. */
  async function consumeAs(app: string, queue: string): Promise<string | number> {
    const conn = await amqp.connect(brokerUrl(app));
    conn.on('error', () => undefined);
    try {
      const ch = await conn.createChannel();
      ch.on('error', () => undefined);
      try {
        await ch.consume(queue, () => undefined);
        return 'ok';
      } catch (err) {
        return (err as { code?: number }).code ?? String(err);
      }
    } finally {
      await conn.close().catch(() => undefined);
    }
  }

  it('lets the dispatcher consume its own queues, and refuses crew-api and sponsorship-api (403 ACCESS_REFUSED)', async () => {
    const queue = await queueNamed('webhooks.');
    expect(await consumeAs('webhook-dispatcher', queue)).toBe('ok');
    expect(await consumeAs('crew-api', queue)).toBe(403);
    expect(await consumeAs('sponsorship-api', queue)).toBe(403);
  });

  it("refuses every other app's user on auth-server's RPC queue and sponsorship-api's event queue", async () => {
    const ch = await admin.createChannel();
    // As auth-server declares it (RPC_QUEUE_OPTIONS); left in place for the run's other specs.
    await ch.assertQueue('rpc.auth-server', RPC_QUEUE_OPTIONS);
    await ch.close();
    expect(await consumeAs('auth-server', 'rpc.auth-server')).toBe('ok');
    for (const app of ['consent-ui', 'crew-api', 'sponsorship-api', 'webhook-dispatcher']) {
      expect([app, await consumeAs(app, 'rpc.auth-server')]).toEqual([app, 403]);
    }
    const events = await queueNamed('sponsorship.');
    expect(await consumeAs('sponsorship-api', events)).toBe('ok');
    for (const app of ['auth-server', 'consent-ui', 'crew-api', 'webhook-dispatcher']) {
      expect([app, await consumeAs(app, events)]).toEqual([app, 403]);
    }
  });

  it('refuses a publisher that claims another user (the user_id the RPC server trusts)', async () => {
    const conn = await amqp.connect(brokerUrl('crew-api'));
    conn.on('error', () => undefined);
    try {
      const ch = await conn.createConfirmChannel();
      const closed = new Promise<number | undefined>((resolve) =>
        ch.on('error', (err: { code?: number }) => resolve(err.code)),
      );
      ch.publish('', 'rpc.auth-server', Buffer.from('{}'), { userId: amqpUser('webhook-dispatcher') });
      expect(await closed).toBe(406);
    } finally {
      await conn.close().catch(() => undefined);
    }
  });
});

describe('RabbitMQ: on crew.events, each app publishes and binds its own event types only', () => {
  // A vhost of this describe's own (the run's users and grants, topic permissions included): what it
  // publishes reaches no other file's dispatcher or sponsorship-api.
  let vhost: { url: string; remove(): Promise<void> };
  let admin: amqp.ChannelModel;
  const brokerUrl = (app: string) => appConnections(app, { ...owner, AMQP_URL: vhost.url }).AMQP_URL!;

  beforeAll(async () => {
    vhost = await createSuiteVhost(services.amqpUrl, 'topics');
    admin = await amqp.connect(vhost.url);
    const ch = await admin.createChannel();
    await ch.assertExchange(CREW_EVENTS_EXCHANGE, 'topic', { durable: true });
    await ch.close();
  });

  afterAll(async () => {
    await admin?.close();
    await vhost?.remove();
  });

  /** A queue the administrator declares under a name of `prefix` (one the consumer may bind). */
  async function queueNamed(prefix: string): Promise<string> {
    const name = `${prefix}lp-${randomBytes(4).toString('hex')}`;
    const ch = await admin.createChannel();
    await ch.assertQueue(name, { durable: false, autoDelete: false });
    await ch.close();
    return name;
  }

  /**
   * Publishes on crew.events as `app`'s user with publisher confirms: 'ok' once confirmed, or the
   * code the broker closed the channel with (403 ACCESS_REFUSED: the routing key is not its own).
   */
  async function publishAs(app: string, routingKey: string): Promise<string | number> {
    const conn = await amqp.connect(brokerUrl(app));
    conn.on('error', () => undefined);
    try {
      const ch = await conn.createConfirmChannel();
      const closed = new Promise<number | string>((resolve) =>
        ch.on('error', (err: { code?: number }) => resolve(err.code ?? String(err))),
      );
      const confirmed = new Promise<string>((resolve, reject) =>
        ch.publish(CREW_EVENTS_EXCHANGE, routingKey, Buffer.from('{}'), {}, (err) =>
          err ? reject(err) : resolve('ok'),
        ),
      ).catch(() => closed);
      return await Promise.race([confirmed, closed]);
    } finally {
      await conn.close().catch(() => undefined);
    }
  }

  /** Binds a queue of `prefix` (one `app` may bind) to crew.events with `key`, as `app`: 'ok' or the code. */
  async function bindAs(app: string, prefix: string, key: string): Promise<string | number> {
    const queue = await queueNamed(prefix);
    const conn = await amqp.connect(brokerUrl(app));
    conn.on('error', () => undefined);
    try {
      const ch = await conn.createChannel();
      ch.on('error', () => undefined);
      try {
        await ch.bindQueue(queue, CREW_EVENTS_EXCHANGE, key);
        return 'ok';
      } catch (err) {
        return (err as { code?: number }).code ?? String(err);
      }
    } finally {
      await conn.close().catch(() => undefined);
    }
  }

  it('lets each publisher publish its own event types only (403 ACCESS_REFUSED closes the channel)', async () => {
    expect(await publishAs('auth-server', 'user.consent.revoked')).toBe('ok');
    expect(await publishAs('auth-server', 'user.profile.updated')).toBe(403);
    expect(await publishAs('crew-api', 'user.consent.revoked')).toBe(403);
    for (const key of [...EVENT_TYPES.filter((t) => t !== 'user.consent.revoked'), MEMBER_REGISTERED]) {
      expect([key, await publishAs('crew-api', key)]).toEqual([key, 'ok']);
    }
    // Nor any key of its own making.
    expect(await publishAs('crew-api', 'user.profile.updated.extra')).toBe(403);
    expect(await publishAs('crew-api', 'crew.member.deleted')).toBe(403);
  });

  it('lets each consumer bind its queues with the event types it consumes only', async () => {
    expect(await bindAs('sponsorship-api', 'sponsorship.', MEMBER_REGISTERED)).toBe('ok');
    expect(await bindAs('sponsorship-api', 'sponsorship.', 'user.profile.updated')).toBe(403);
    expect(await bindAs('sponsorship-api', 'sponsorship.', '#')).toBe(403);
    expect(await bindAs('webhook-dispatcher', 'webhooks.', 'user.consent.revoked')).toBe('ok');
    expect(await bindAs('webhook-dispatcher', 'webhooks.', MEMBER_REGISTERED)).toBe(403);
    expect(await bindAs('webhook-dispatcher', 'webhooks.', '#')).toBe(403);
    expect(await bindAs('webhook-dispatcher', 'webhooks.', 'user.*')).toBe(403);
  });
});

describe('webhook signing secrets reach the dispatcher only', () => {
  let auth: AuthServerHarness;
  const connections: AmqpConnection[] = [];

  beforeAll(async () => {
    // sandbox-partner's secret is seeded; the batch's contract names the dispatcher alone.
    auth = await startAuthServer();
  });

  afterAll(async () => {
    await Promise.all(connections.map((c) => c.close()));
    await auth.close();
  });

  function ask<Req, Res>(app: string, contract: RpcContract<Req, Res>, payload: Req): Promise<Res> {
    const amqp = new AmqpConnection(
      { url: appConnections(app, owner).AMQP_URL!, name: `least-privilege-${app}`, prefetch: 10 },
      createLogger('least-privilege', 'silent'),
    );
    amqp.start();
    connections.push(amqp);
    return new RpcClient(amqp, { RPC_TIMEOUT_MS: 5000 }).call(contract, payload);
  }

  const question = {
    user_id: 'usr_least_privilege',
    event_type: 'webhook.test' as const,
    client_id: 'sandbox-partner',
  };

  it('answers the dispatcher the recipients with their secrets', async () => {
    const answer = await ask('webhook-dispatcher', AUTH_WEBHOOK_RECIPIENTS_BATCH, { questions: [question] });
    expect(answer.partners.map((p) => p.client_id)).toEqual(['sandbox-partner']);
    expect(answer.partners[0].secrets).toContain('whsec_sandbox_secret');
  });

  it.each(['crew-api', 'consent-ui', 'sponsorship-api'])('refuses the secrets to %s', async (app) => {
    const refused = await ask(app, AUTH_WEBHOOK_RECIPIENTS_BATCH, { questions: [question] }).then(
      () => 'answered',
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(RpcRemoteError);
    expect((refused as RpcRemoteError).remote).toMatchObject({ error: 'access_denied' });
  });

  it("gives crew-api's webhook test the partner's URL and nothing else", async () => {
    const answer = await ask('crew-api', AUTH_WEBHOOK_TARGET, {
      user_id: question.user_id,
      client_id: 'sandbox-partner',
    });
    expect(Object.keys(answer)).toEqual(['webhook_url']);
    expect(answer.webhook_url).toMatch(/^https?:\/\//);
    expect(JSON.stringify(answer)).not.toContain('whsec_');
  });
});
