import { eventually } from '../support/services';
import {
  createPartner,
  deliveriesOf,
  grantConsent,
  newEvent,
  newMember,
  useDeliveryStack,
} from '../support/starters/webhook-dispatcher';
import { sample, scrape } from '../support/metrics';

/**
 * An endpoint that fails every attempt for WEBHOOK_DISABLE_AFTER is disabled by the statement that
 * records the attempt completing that span, and the dispatcher says so once: the
 * `webhook_endpoints_disabled_total` counter goes up by one, not once per later failure, and events
 * after it are recorded as skipped. Real PostgreSQL, RabbitMQ and a receiver that answers 503.
 */
jest.setTimeout(40_000);

const { auth, dispatcher, receiver } = useDeliveryStack({
  WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s,1s,1s',
  WEBHOOK_TIMEOUT_MS: '1000',
  WEBHOOK_DISABLE_AFTER: '1500ms',
});

const disabledTotal = async () =>
  sample(await scrape(dispatcher.app), 'webhook_endpoints_disabled_total', { app: 'webhook-dispatcher' }) ??
  0;

it('disables a failing endpoint once, counts it once, and skips the events after it', async () => {
  const userId = await newMember(auth);
  const path = '/always-503';
  const p = await createPartner(auth, { webhookUrl: receiver.endpoint(path, () => 503) });
  await grantConsent(auth, userId, p.clientId, ['vessels:read']);
  const before = await disabledTotal();

  const first = newEvent('user.vessels.updated', userId);
  await dispatcher.publish(first);
  const endpoint = await eventually(async () => {
    const { rows } = await dispatcher.db.query<{ status: string; disabled_reason: string | null }>(
      `SELECT status, disabled_reason FROM webhooks.webhook_endpoints WHERE client_id = $1`,
      [p.clientId],
    );
    return rows[0]?.status === 'disabled' ? rows[0] : undefined;
  }, 20_000);
  expect(endpoint.disabled_reason).toBe('failing');
  expect(await disabledTotal()).toBe(before + 1);

  // The delivery that was under way goes on failing; no new disabling is counted for it.
  const attemptsThen = receiver.requests(path).length;
  await eventually(async () => (receiver.requests(path).length > attemptsThen ? true : undefined));
  const second = newEvent('user.vessels.updated', userId);
  await dispatcher.publish(second);
  const [skipped] = await eventually(async () => {
    const rows = await deliveriesOf(dispatcher.db, second.id);
    return rows.length > 0 ? rows : undefined;
  });
  expect(skipped.status).toBe('skipped');
  expect(await disabledTotal()).toBe(before + 1);
});
