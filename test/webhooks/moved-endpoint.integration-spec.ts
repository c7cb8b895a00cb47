import { eventually } from '../support/services';
import { attemptsOf, deliveriesOf, newEvent, useDeliveryStack } from '../support/starters/webhook-dispatcher';
import { createPartner, grantConsent, createUser } from '../support/app-factories';

// docs/rules.md (Webhooks): "a delivery target must be the partner's registered URL". A partner
// that moves its endpoint while a delivery is being retried gets the retries at the new URL; the
// old one (perhaps no longer the partner's) gets nothing more. The recipient cache is off here so
// the move is seen by the very next attempt.
jest.setTimeout(40_000);

const { auth, dispatcher, receiver } = useDeliveryStack({
  WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s,1s,1s',
  WEBHOOK_TIMEOUT_MS: '1000',
  WEBHOOK_RECIPIENT_CACHE_TTL: '0s',
});

it('retries at the URL the partner registers meanwhile, and the log shows where the delivery went', async () => {
  const userId = (await createUser(auth)).user_id;
  const oldUrl = receiver.endpoint('/old-endpoint', () => 503);
  const newUrl = receiver.endpoint('/new-endpoint', () => 200);
  const p = await createPartner(auth, { webhookUrl: oldUrl });
  await grantConsent(auth, userId, p.client_id, ['profile:read']);
  const event = newEvent('user.profile.updated', userId);
  await dispatcher.publish(event);

  await eventually(async () => (receiver.requests('/old-endpoint').length >= 1 ? true : undefined));
  await dispatcher.db.query(`UPDATE auth.partners SET webhook_url = $1 WHERE client_id = $2`, [
    newUrl,
    p.client_id,
  ]);

  const [delivery] = await eventually(async () => {
    const r = await deliveriesOf(dispatcher.db, event.id);
    return r[0]?.status === 'delivered' ? r : undefined;
  }, 20_000);
  const atOld = receiver.requests('/old-endpoint').length;
  expect(receiver.requests('/new-endpoint')).toHaveLength(1);
  expect(receiver.requests('/new-endpoint')[0].headers['x-svc-event-id']).toBe(event.id);
  expect(delivery.target_url).toBe(newUrl);
  const attempts = await attemptsOf(dispatcher.db, delivery.delivery_id);
  expect(attempts.at(-1)?.status_code).toBe(200);
  expect(attempts).toHaveLength(atOld + 1);
});
