import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import type { PartnerPrincipal } from '@svc/security';
import { PartnerWebhooksService } from '../../apps/webhook-dispatcher/src/partner-webhooks/partner-webhooks.service';
import { eventually } from '../support/services';
import {
  createPartner,
  grantConsent,
  newMember,
  startDispatcher,
  useDeliveryStack,
  type DispatcherHarness,
} from '../support/starters/webhook-dispatcher';

// The backlog hands out its capacity per partner: while partner A replays 10,000 deliveries to an
// endpoint that never answers (every attempt lasts the whole 5 s budget), partner B's redelivery
// reaches B within 10 s, with two dispatchers sharing the backlog as two replicas do. Before, the
// backlog was one queue: B's redelivery waited behind A's 10,000 (64 per 5 s per dispatcher).
jest.setTimeout(120_000);

const env = {
  // No retry within the test: A's attempts fail once each, B's succeed.
  WEBHOOK_RETRY_SCHEDULE: '1h',
  WEBHOOK_REPLAYS_PER_HOUR: '10',
};
const { auth, dispatcher, receiver } = useDeliveryStack(env);
let second: DispatcherHarness | undefined;

beforeAll(async () => {
  second = await startDispatcher(auth, env);
});
afterAll(async () => {
  await second?.close();
});

/** An endpoint that never answers: counts the requests it holds and each delivery id it saw. */
class HangingEndpoint {
  open = 0;
  readonly seen = new Map<string, number>();
  private readonly server = http.createServer((req) => {
    const id = String(req.headers['x-svc-delivery-id']);
    this.seen.set(id, (this.seen.get(id) ?? 0) + 1);
    this.open += 1;
    req.socket.once('close', () => (this.open -= 1));
    req.resume();
  });
  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }
  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

const asPartner = (clientId: string) =>
  ({ client_id: clientId, suspended: false, sponsorship: false }) as unknown as PartnerPrincipal;

/** `count` finished deliveries of a partner `minutesAgo` old, written as the dispatcher writes them. */
async function finishedDeliveries(
  clientId: string,
  userId: string,
  count: number,
  status: 'delivered' | 'failed',
  minutesAgo = 60,
): Promise<string[]> {
  const run = randomBytes(4).toString('hex');
  const { rows } = await dispatcher.db.query<{ delivery_id: string }>(
    `INSERT INTO webhooks.deliveries
       (delivery_id, event_id, event_type, user_id, client_id, target_url, body, status, attempts,
        give_up_reason, created_at)
     SELECT 'dlv_bf' || $1 || g, 'evt_bf' || $1 || g, 'user.profile.updated', $2, $3, 'http://127.0.0.1:9/x',
            '{"created_at":"2026-01-01T00:00:00.000Z","id":"evt_bf' || $1 || g ||
              '","type":"user.profile.updated","user_id":"' || $2 || '"}', $5, 1, CASE WHEN $5 = 'failed' THEN 'attempts_exhausted' END,
            now() - $6::int * interval '1 minute'
       FROM generate_series(1, $4::int) AS g
     RETURNING delivery_id`,
    [run, userId, clientId, count, status, minutesAgo],
  );
  return rows.map((r) => r.delivery_id);
}

it("delivers partner B's redelivery within 10 s while partner A replays 10,000 deliveries to a hanging endpoint", async () => {
  const hanging = new HangingEndpoint();
  const partners = dispatcher.app.get(PartnerWebhooksService);
  let a: string | undefined;
  try {
    const userId = await newMember(auth);
    a = (await createPartner(auth, { webhookUrl: await hanging.start() })).clientId;
    const bPath = '/backlog-fairness-b';
    const b = (await createPartner(auth, { webhookUrl: receiver.endpoint(bPath) })).clientId;
    await grantConsent(auth, userId, a, ['profile:read']);
    await grantConsent(auth, userId, b, ['profile:read']);

    // Two replays of 5,000 (one of 10,000 can outlast the statement timeout on a busy machine).
    let replayed = 0;
    for (const minutesAgo of [90, 60]) {
      await finishedDeliveries(a, userId, 5_000, 'failed', minutesAgo);
      const since = new Date(Date.now() - (minutesAgo + 10) * 60_000);
      const until = new Date(Date.now() - (minutesAgo - 10) * 60_000);
      replayed += (await partners.replay(asPartner(a), { since, until, status: 'given_up' })).replayed_count;
    }
    expect(replayed).toBe(10_000);
    // Both dispatchers are running A's backlog against the hanging endpoint.
    await eventually(async () => (hanging.open >= 100 ? true : undefined), 30_000);

    const latencies: number[] = [];
    for (const source of await finishedDeliveries(b, userId, 3, 'delivered')) {
      const asked = Date.now();
      const { delivery_id: redelivery } = await partners.redeliver(asPartner(b), source);
      const arrived = await eventually(
        async () => receiver.requests(bPath).find((r) => r.headers['x-svc-delivery-id'] === redelivery),
        30_000,
      );
      latencies.push(arrived.receivedAt - asked);
    }
    console.log(`backlog fairness: B's redeliveries reached B after ${latencies.join(', ')} ms`);
    for (const ms of latencies) expect(ms).toBeLessThan(10_000);

    // A got no more than its slots in both replicas, and no attempt twice (one lease per attempt).
    expect(hanging.open).toBeLessThanOrEqual(2 * 64);
    expect([...hanging.seen.values()].every((n) => n === 1)).toBe(true);
    const { rows } = await dispatcher.db.query<{ pending: number }>(
      `SELECT count(*)::int AS pending FROM webhooks.deliveries
        WHERE client_id = $1 AND status = 'pending' AND attempts = 0`,
      [a],
    );
    // Most of A's replays still wait their turn, in the backlog, not lost.
    expect(rows[0].pending).toBeGreaterThan(9_000);
  } finally {
    // A's backlog ends with the test: later files' dispatchers share this database.
    if (a) {
      await dispatcher.db.query(
        `UPDATE webhooks.deliveries SET status = 'failed', give_up_reason = 'attempts_exhausted'
          WHERE client_id = $1 AND status = 'pending'`,
        [a],
      );
    }
    await hanging.close();
  }
});
