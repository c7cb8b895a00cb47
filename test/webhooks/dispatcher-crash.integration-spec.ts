import { eventually } from '../support/services';
import { startAuthServer, type AuthServerHarness } from '../support/starters/auth-server';
import {
  attemptsOf,
  deliveriesOf,
  newEvent,
  startPublisher,
  type EventPublisher,
  spawnDispatcher,
} from '../support/starters/webhook-dispatcher';
import { createPartner, grantConsent, createUser } from '../support/app-factories';
import type { AppProcess } from '../support/starters/app-process';
import { WebhookReceiver } from '../support/webhook-receiver';

// Issue 5, "at least once, never lost": the dispatcher killed with SIGKILL while a partner holds
// its request open. Nothing was recorded or acked, so the broker hands the attempt to the next
// dispatcher, which delivers it once the killed run's lease on the attempt (its request budget and
// 5 s) has run out: a duplicate for the partner, with the same event id.
jest.setTimeout(60_000);

let auth: AuthServerHarness;
let publisher: EventPublisher;
let receiver: WebhookReceiver;
const processes: AppProcess[] = [];

beforeAll(async () => {
  auth = await startAuthServer();
  publisher = await startPublisher(auth);
  receiver = await WebhookReceiver.start();
});

afterAll(async () => {
  await Promise.all(processes.map((p) => p.stop()));
  await receiver?.close();
  await publisher?.close();
  await auth?.close();
});

describe('a dispatcher killed mid-delivery (SIGKILL)', () => {
  it('delivers after a restart, with the same event and delivery id', async () => {
    const userId = (await createUser(auth)).user_id;
    const path = '/held-then-killed';
    // The first request is held open (the dispatcher is killed while waiting); later ones succeed.
    const partner = await createPartner(auth, {
      webhookUrl: receiver.endpoint(path, (n) => (n === 1 ? 'hang' : 204)),
    });
    await grantConsent(auth, userId, partner.client_id, ['profile:read']);

    // An attempt budget the kill comes well within: only the kill ends the first attempt.
    const env = { WEBHOOK_TIMEOUT_MS: '8000', WEBHOOK_RETRY_SCHEDULE: '1s' };
    const first = await spawnDispatcher(auth, 'crash-first', env);
    processes.push(first);
    const event = newEvent('user.profile.updated', userId);
    await publisher.publish(event);

    await eventually(async () => (receiver.requests(path).length === 1 ? true : undefined), 15_000);
    await first.kill();

    const [held] = await deliveriesOf(publisher.db, event.id);
    // The killed attempt left no trace: not recorded, not acked.
    expect(held).toMatchObject({ status: 'pending', attempts: 0 });
    expect(await attemptsOf(publisher.db, held.delivery_id)).toEqual([]);

    const second = await spawnDispatcher(auth, 'crash-second', env);
    processes.push(second);
    const [delivered] = await eventually(async () => {
      const rows = await deliveriesOf(publisher.db, event.id);
      return rows[0]?.status === 'delivered' ? rows : undefined;
    }, 30_000);

    const requests = receiver.requests(path);
    expect(requests).toHaveLength(2);
    expect(requests.map((r) => r.headers['x-svc-event-id'])).toEqual([event.id, event.id]);
    expect(requests.map((r) => r.headers['x-svc-delivery-id'])).toEqual([held.delivery_id, held.delivery_id]);
    expect(requests[1].rawBody.equals(requests[0].rawBody)).toBe(true);
    expect(delivered).toMatchObject({ delivery_id: held.delivery_id, attempts: 1 });
    expect(await attemptsOf(publisher.db, held.delivery_id)).toEqual([
      expect.objectContaining({ attempt: 1, status_code: 204, error: null }),
    ]);
    expect(await deliveriesOf(publisher.db, event.id)).toHaveLength(1);
  });
});
