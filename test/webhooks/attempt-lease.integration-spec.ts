import { eventually } from '../support/services';
import { attemptsOf, deliveriesOf, newEvent, useDeliveryStack } from '../support/starters/webhook-dispatcher';
import { createPartner, grantConsent, createUser } from '../support/app-factories';

// One run per attempt: a second copy of an attempt (the backlog message of a first attempt that
// outlives the fan-out's one-second wait, or an event message handed out twice) waits for the run
// that holds the attempt's lease instead of sending the event again. Before the lease, a partner
// answering in 2 s got every event twice.
jest.setTimeout(60_000);

const { auth, dispatcher, receiver } = useDeliveryStack({ WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s,1s,1s' });

async function delivered(eventIds: readonly string[]) {
  return eventually(async () => {
    const rows = (await Promise.all(eventIds.map((id) => deliveriesOf(dispatcher.db, id)))).flat();
    return rows.length === eventIds.length && rows.every((r) => r.status === 'delivered') ? rows : undefined;
  }, 30_000);
}

it('sends each event once to a partner that answers after 2.5 s, longer than the fan-out waits', async () => {
  const userId = (await createUser(auth)).user_id;
  const path = '/slow-endpoint';
  const p = await createPartner(auth, {
    webhookUrl: receiver.endpoint(path, () => ({ status: 204, afterMs: 2500 })),
  });
  await grantConsent(auth, userId, p.client_id, ['profile:read']);
  const events = [1, 2, 3].map(() => newEvent('user.profile.updated', userId));
  for (const e of events) await dispatcher.publish(e);

  const rows = await delivered(events.map((e) => e.id));
  // Time for a second copy to have gone out, had one been sent.
  await new Promise((resolve) => setTimeout(resolve, 3000));
  const ids = receiver.requests(path).map((r) => r.headers['x-svc-event-id']);
  expect(ids.sort()).toEqual(events.map((e) => e.id).sort());
  for (const row of rows) {
    expect(await attemptsOf(dispatcher.db, row.delivery_id)).toEqual([
      expect.objectContaining({ attempt: 1, status_code: 204 }),
    ]);
  }
});

it('sends an event once when its message arrives twice while the first copy is being delivered', async () => {
  const userId = (await createUser(auth)).user_id;
  const path = '/twice-published';
  const p = await createPartner(auth, {
    webhookUrl: receiver.endpoint(path, () => ({ status: 204, afterMs: 500 })),
  });
  await grantConsent(auth, userId, p.client_id, ['profile:read']);
  const event = newEvent('user.profile.updated', userId);
  await dispatcher.publish(event);
  await eventually(async () => (receiver.requests(path).length === 1 ? true : undefined), 10_000);
  // The copy arrives while the partner still holds the first request.
  await dispatcher.publish(event);

  await delivered([event.id]);
  await new Promise((resolve) => setTimeout(resolve, 2000));
  expect(receiver.requests(path).map((r) => r.headers['x-svc-event-id'])).toEqual([event.id]);
});
