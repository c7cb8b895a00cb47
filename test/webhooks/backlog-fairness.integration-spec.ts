import { PartnerWebhooksService } from '../../apps/webhook-dispatcher/src/partner-webhooks/partner-webhooks.service';
import { eventually } from '../support/services';
import { asPartner, finishedDeliveries, TestEndpoint } from '../support/webhook-receiver';
import {
  startDispatcher,
  useDeliveryStack,
  type DispatcherHarness,
} from '../support/starters/webhook-dispatcher';
import { createPartner, grantConsent, createUser } from '../support/app-factories';

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

it("delivers partner B's redelivery within 10 s while partner A replays 10,000 deliveries to a hanging endpoint", async () => {
  const hanging = new TestEndpoint();
  const partners = dispatcher.app.get(PartnerWebhooksService);
  let a: string | undefined;
  try {
    const userId = (await createUser(auth)).user_id;
    a = (await createPartner(auth, { webhookUrl: await hanging.start() })).client_id;
    const bPath = '/backlog-fairness-b';
    const b = (await createPartner(auth, { webhookUrl: receiver.endpoint(bPath) })).client_id;
    await grantConsent(auth, userId, a, ['profile:read']);
    await grantConsent(auth, userId, b, ['profile:read']);

    // Two replays of 5,000 (one of 10,000 can outlast the statement timeout on a busy machine).
    let replayed = 0;
    for (const minutesAgo of [90, 60]) {
      await finishedDeliveries(dispatcher.db, { clientId: a, userId }, 5_000, { minutesAgo });
      const since = new Date(Date.now() - (minutesAgo + 10) * 60_000);
      const until = new Date(Date.now() - (minutesAgo - 10) * 60_000);
      replayed += (await partners.replay(asPartner(a), { since, until, status: 'given_up' })).replayed_count;
    }
    expect(replayed).toBe(10_000);
    // Both dispatchers are running A's backlog against the hanging endpoint.
    await eventually(async () => (hanging.open >= 100 ? true : undefined), 30_000);

    const latencies: number[] = [];
    for (const source of await finishedDeliveries(dispatcher.db, { clientId: b, userId }, 3, {
      status: 'delivered',
    })) {
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
