import { randomBytes } from 'node:crypto';
import * as amqp from 'amqplib';
import {
  AUTH_ACCESS_READS_RECORD,
  AUTH_MEMBER_ACCESS,
  NEST_APPS,
  RPC_CONTRACTS,
  RPC_QUEUES,
  type NestAppName,
  type RpcContract,
} from '@svc/contracts';
import { RpcRemoteError } from '@svc/platform';
import { Pool } from 'pg';
import { amqpUser, appBrokerUrl } from '../../scripts/lib/credentials.cjs';
import { CallerRpc } from '../support/broker-users';
import { createCrewMember, createPartner, grantConsent } from '../support/app-factories';
import { startAuthServer, type AuthServerHarness } from '../support/starters/auth-server';
import { startCrewApi, type CrewApiHarness } from '../support/starters/crew-api';
import { startSponsorshipApi, type SponsorshipApiHarness } from '../support/starters/sponsorship-api';
import { startDispatcher, type DispatcherHarness } from '../support/starters/webhook-dispatcher';
import { testServices } from '../support/services';

/**
 * Every RPC contract answers only the apps it names (issue: "a compromised app"): each contract's
 * request, well formed, is sent with another app's real broker credentials to the real answering
 * app on the run's RabbitMQ, and gets `access_denied` with no data, and nothing is written.
 */
jest.setTimeout(60_000);

const services = testServices();
const today = new Date().toISOString().slice(0, 10);
const digest = () => randomBytes(32).toString('hex');

let auth: AuthServerHarness;
let crew: CrewApiHarness;
let sponsorship: SponsorshipApiHarness;
let dispatcher: DispatcherHarness;
let db: Pool;
let rpc: CallerRpc;
/** A crew member (crew-api and auth-server) connected to a partner of this file's own. */
let memberId: string;
let clientId: string;

beforeAll(async () => {
  auth = await startAuthServer();
  crew = await startCrewApi(auth, {}, { rpc: true });
  sponsorship = await startSponsorshipApi(auth, {}, { rpc: true });
  dispatcher = await startDispatcher(auth, {}, { rpc: true });
  db = new Pool({ connectionString: services.databaseUrl, max: 2 });
  rpc = new CallerRpc(services.amqpUrl, 5000);
  clientId = (await createPartner(auth, { sponsorship: true })).client_id;
  memberId = (await createCrewMember(auth, crew)).user_id;
  await grantConsent(auth, memberId, clientId, ['profile:read']);
}, 120_000);

afterAll(async () => {
  await rpc?.close();
  await db?.end();
  await dispatcher?.close();
  await sponsorship?.close();
  await crew?.close();
  await auth?.close();
});

/** A well-formed request of each contract: what its rightful caller could send. */
const REQUESTS: Record<string, () => unknown> = {
  'auth.ping': () => ({ from: 'intruder' }),
  'auth.introspect': () => ({ token_digest: digest() }),
  'auth.login': () => ({ email: 'alex.morgan@sandbox.test', password: 'wrong-password' }),
  'auth.authorize.validate': () => ({ params: { client_id: clientId }, repeated: [] }),
  'auth.authorize.decide': () => ({
    user_id: memberId,
    params: { client_id: clientId, response_type: 'code', scope: 'vessels:read' },
    decision: 'allow',
  }),
  'auth.consents.list': () => ({ user_id: memberId }),
  'auth.consents.revoke': () => ({ user_id: memberId, client_id: clientId }),
  'auth.consents.connected': () => ({ client_id: clientId, user_ids: [memberId] }),
  'auth.partners.verify': () => ({ client_id: clientId, secret_digest: digest() }),
  'auth.webhooks.target': () => ({ user_id: memberId, client_id: clientId }),
  'auth.webhooks.recipients.batch': () => ({
    questions: [{ user_id: memberId, event_type: 'webhook.test', client_id: 'sandbox-partner' }],
  }),
  'auth.portal.redeem': () => ({ token_digest: digest() }),
  'auth.portal.peek': () => ({ token_digest: digest() }),
  'auth.portal.standing': () => ({ client_id: clientId }),
  'auth.access-reads.record': () => ({
    counts: [
      {
        user_id: memberId,
        client_id: clientId,
        scope: 'profile:read',
        day: today,
        count: 5,
        last_at: new Date().toISOString(),
      },
    ],
  }),
  'auth.member.access': () => ({ user_id: memberId }),
  'crew.member.export': () => ({ user_id: memberId }),
  'crew.members.by_email': () => ({ emails: ['alex.morgan@sandbox.test'] }),
  'crew.membership.grant': () => ({
    expires_at: new Date(Date.now() + 86_400_000).toISOString(),
    user_id: memberId,
    sponsor_client_id: clientId,
    sponsorship_id: `sp_${randomBytes(6).toString('hex')}`,
  }),
  'crew.membership.drop': () => ({ drops: [{ user_id: memberId, sponsorship_id: 'sp_none' }] }),
  'sponsorship.member.sponsorships': () => ({ user_id: memberId }),
  'sponsorship.portal.seats': () => ({ client_id: clientId, partner_name: 'Intruder', query: {} }),
  'auth.webhooks.signing-keys': () => ({ client_id: clientId, rotate: true }),
  'webhooks.portal.overview': () => ({ client_id: clientId }),
  'webhooks.portal.deliveries': () => ({ client_id: clientId, query: {} }),
  'webhooks.portal.delivery': () => ({ client_id: clientId, delivery_id: 'dlv_none' }),
  'webhooks.portal.action': () => ({ client_id: clientId, portal_session: 'ps_intruder', action: 'test' }),
};

/** What a contract would write for this file's member and partner, as a row count each. */
async function written(): Promise<Record<string, unknown>> {
  const one = async (sql: string, values: unknown[]) => (await db.query(sql, values)).rows;
  return {
    accessReads: await one(`SELECT count(*)::int AS n FROM auth.access_reads WHERE user_id = $1`, [memberId]),
    consents: await one(
      `SELECT client_id, scopes, revoked_at FROM auth.consents WHERE user_id = $1 ORDER BY connected_at`,
      [memberId],
    ),
    codes: await one(`SELECT count(*)::int AS n FROM auth.authorization_codes WHERE user_id = $1`, [
      memberId,
    ]),
    membership: await one(
      `SELECT tier, source, sponsor_client_id, expires_at FROM crew.memberships WHERE user_id = $1`,
      [memberId],
    ),
    portalActions: await one(`SELECT count(*)::int AS n FROM webhooks.portal_actions WHERE client_id = $1`, [
      clientId,
    ]),
    signingKeys: await one(`SELECT count(*)::int AS n FROM auth.webhook_signing_keys WHERE client_id = $1`, [
      clientId,
    ]),
    deliveries: await one(`SELECT count(*)::int AS n FROM webhooks.deliveries WHERE client_id = $1`, [
      clientId,
    ]),
  };
}

/** Another app than the contract names: sponsorship-api (the compromised app) when it may. */
function wrongCaller(contract: RpcContract<unknown, unknown>): NestAppName {
  const order: NestAppName[] = [
    'sponsorship-api',
    'consent-ui',
    'crew-api',
    'webhook-dispatcher',
    'auth-server',
  ];
  return order.find((app) => !contract.callers.includes(app)) as NestAppName;
}

describe('each contract refuses an app it does not name', () => {
  const contracts = RPC_CONTRACTS as RpcContract<unknown, unknown>[];

  it('has a request here for every contract', () => {
    expect(contracts.map((c) => c.pattern).sort()).toEqual(Object.keys(REQUESTS).sort());
  });

  it.each(contracts.map((c) => [c.pattern, c] as const))(
    '%s: access_denied, no data, nothing written',
    async (pattern, contract) => {
      const before = await written();
      const caller = wrongCaller(contract);
      const answer = await rpc
        .as(caller)
        .call(contract, REQUESTS[pattern]())
        .then(
          (data) => ({ answered: data }),
          (err: unknown) => err,
        );
      expect(answer).toBeInstanceOf(RpcRemoteError);
      expect((answer as RpcRemoteError).remote).toEqual({
        error: 'access_denied',
        message: `${pattern} is not answered to this caller`,
      });
      expect(await written()).toEqual(before);
    },
  );
});

describe('the callers a contract names', () => {
  it('are answered: crew-api records reads, and the reply counts the rows written', async () => {
    const other = (await createCrewMember(auth, crew)).user_id;
    const at = new Date().toISOString();
    const count = (user_id: string, scope: 'profile:read' | 'seatime:read', n: number) => ({
      user_id,
      client_id: clientId,
      scope,
      day: today,
      count: n,
      last_at: at,
    });
    const answer = await rpc.as('crew-api').call(AUTH_ACCESS_READS_RECORD, {
      counts: [
        count(other, 'profile:read', 2),
        count(other, 'seatime:read', 1),
        count(other, 'profile:read', 3),
      ],
    });
    // Two rows: the equal keys are summed into one.
    expect(answer).toEqual({ recorded: 2 });
    const access = await rpc.as('consent-ui').call(AUTH_MEMBER_ACCESS, { user_id: other });
    expect(access.reads.map((r) => [r.scope, r.count]).sort()).toEqual([
      ['profile:read', 5],
      ['seatime:read', 1],
    ]);
  });

  it("refuse a count for a day other than today or yesterday, or larger than a flush interval's reads", async () => {
    const at = new Date().toISOString();
    const base = { user_id: memberId, client_id: clientId, scope: 'profile:read' as const, last_at: at };
    const before = await written();
    for (const bad of [
      { ...base, day: '2099-01-01', count: 1 },
      { ...base, day: '2020-01-01', count: 1 },
      { ...base, day: today, count: 3_000_000_000 },
    ]) {
      const refused = await rpc
        .as('crew-api')
        .call(AUTH_ACCESS_READS_RECORD, { counts: [bad] })
        .catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(RpcRemoteError);
      expect((refused as RpcRemoteError).remote).toMatchObject({ error: 'invalid_request' });
    }
    expect(await written()).toEqual(before);
  });
});

describe('the caller is the broker user RabbitMQ vouches for', () => {
  /** A raw AMQP connection as `app`'s own user, on one channel, listening for direct replies. */
  async function rawAs(app: NestAppName) {
    const conn = await amqp.connect(appBrokerUrl(app, services.amqpUrl));
    conn.on('error', () => undefined);
    const ch = await conn.createChannel();
    ch.on('error', () => undefined);
    const replies: unknown[] = [];
    await ch.consume('amq.rabbitmq.reply-to', (m) => m && replies.push(JSON.parse(m.content.toString())), {
      noAck: true,
    });
    return { conn, ch, replies };
  }

  it("closes the channel of a publisher that claims another app's user (406), and nothing is answered", async () => {
    const { conn, ch, replies } = await rawAs('sponsorship-api');
    try {
      const closed = new Promise<number | undefined>((resolve) =>
        ch.on('error', (err: { code?: number }) => resolve(err.code)),
      );
      const request = { pattern: 'crew.member.export', data: { user_id: memberId }, id: 'forged' };
      ch.publish('', RPC_QUEUES.crewApi, Buffer.from(JSON.stringify(request)), {
        userId: amqpUser('consent-ui'),
        replyTo: 'amq.rabbitmq.reply-to',
        correlationId: 'forged',
      });
      expect(await closed).toBe(406);
      expect(replies).toEqual([]);
    } finally {
      await conn.close().catch(() => undefined);
    }
  });

  it('refuses a request that carries no user_id at all', async () => {
    const { conn, ch, replies } = await rawAs('consent-ui');
    try {
      const request = { pattern: 'crew.member.export', data: { user_id: memberId }, id: 'anonymous' };
      ch.publish('', RPC_QUEUES.crewApi, Buffer.from(JSON.stringify(request)), {
        replyTo: 'amq.rabbitmq.reply-to',
        correlationId: 'anonymous',
      });
      const deadline = Date.now() + 5000;
      while (replies.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(replies).toEqual([
        {
          id: 'anonymous',
          err: { error: 'access_denied', message: 'crew.member.export is not answered to this caller' },
          status: 'error',
        },
      ]);
    } finally {
      await conn.close();
    }
  });
});

it('names only apps of the service', () => {
  for (const c of RPC_CONTRACTS) for (const app of c.callers) expect(NEST_APPS).toContain(app);
});
