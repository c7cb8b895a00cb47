import { eventually } from '../support/services';
import {
  deliveriesOf,
  newEvent,
  startDeliveryStack,
  type DeliveryStack,
} from '../support/starters/webhook-dispatcher';
import { createPartner, grantConsent, createUser } from '../support/app-factories';
import { sample, scrape } from '../support/metrics';

/**
 * An endpoint that fails every attempt for WEBHOOK_DISABLE_AFTER is disabled by the statement that
 * records the attempt completing that span, and the dispatcher says so once per disabling: the
 * `webhook_endpoints_disabled_total` counter goes up by exactly the endpoints disabled, not once
 * per later failure, and events after it are recorded as skipped. Real PostgreSQL, RabbitMQ and a
 * receiver that answers 503.
 *
 * The stack runs on a vhost of its own: on the run's shared one, this dispatcher, with its short
 * WEBHOOK_DISABLE_AFTER, would also work off other files' failing retries and disable their
 * partners' endpoints (the sandbox partners' included) under the suites that come after it.
 */
jest.setTimeout(40_000);

let stack: DeliveryStack;
let startedAt: Date;

beforeAll(async () => {
  stack = await startDeliveryStack(
    { WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s,1s,1s', WEBHOOK_TIMEOUT_MS: '1000', WEBHOOK_DISABLE_AFTER: '1500ms' },
    { ownVhost: 'auto_disable' },
  );
  const { rows } = await stack.dispatcher.db.query<{ now: Date }>('SELECT now() AS now');
  startedAt = rows[0].now;
}, 60_000);

afterAll(async () => {
  await stack?.close();
});

const disabledTotal = async () =>
  sample(await scrape(stack.dispatcher.app), 'webhook_endpoints_disabled_total', {
    app: 'webhook-dispatcher',
  }) ?? 0;

/** Endpoints disabled for failing since this file began (by this dispatcher: the only one running). */
async function disabledSinceStart(): Promise<string[]> {
  const { rows } = await stack.dispatcher.db.query<{ client_id: string }>(
    `SELECT client_id FROM webhooks.webhook_endpoints
      WHERE status = 'disabled' AND disabled_reason = 'failing' AND disabled_at >= $1`,
    [startedAt],
  );
  return rows.map((r) => r.client_id);
}

it('disables a failing endpoint once, counts each disabling once, and skips the events after it', async () => {
  const { auth, dispatcher, receiver } = stack;
  const userId = (await createUser(auth)).user_id;
  const path = '/always-503';
  const p = await createPartner(auth, { webhookUrl: receiver.endpoint(path, () => 503) });
  await grantConsent(auth, userId, p.client_id, ['vessels:read']);
  const before = await disabledTotal();

  await dispatcher.publish(newEvent('user.vessels.updated', userId));
  await eventually(
    async () => ((await disabledSinceStart()).includes(p.client_id) ? true : undefined),
    20_000,
  );
  // Its own endpoint, and no other partner's.
  expect(await disabledSinceStart()).toEqual([p.client_id]);
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
