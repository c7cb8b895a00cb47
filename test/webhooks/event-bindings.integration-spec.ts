import { CREW_EVENTS_EXCHANGE, EVENT_TYPES } from '@svc/contracts';
import { AmqpConnection } from '@svc/platform';
import {
  declareWebhookTopology,
  EVENTS_QUEUE,
  parkingQueue,
} from '../../apps/webhook-dispatcher/src/deliveries/webhook-queues';
import { eventually } from '../support/services';
import { deliveriesOf, newEvent, useDeliveryStack } from '../support/starters/webhook-dispatcher';
import { createPartner, grantConsent, createUser } from '../support/app-factories';

// crew.events also carries internal events (crew.member.registered, for the sponsorship work);
// the dispatcher's queue must take only the webhook event types.
jest.setTimeout(30_000);

const { auth, dispatcher, receiver } = useDeliveryStack();

/** The queue's bindings, from RabbitMQ's management API for this run's vhost (AMQP cannot list them). */
async function eventBindings(): Promise<string[]> {
  const u = new URL(auth.services.amqpUrl);
  const vhost = encodeURIComponent(decodeURIComponent(u.pathname.replace(/^\//, '')) || '/');
  const port = Number(process.env.RABBITMQ_MANAGEMENT_PORT ?? 15672);
  const user = `${decodeURIComponent(u.username || 'guest')}:${decodeURIComponent(u.password || 'guest')}`;
  const res = await fetch(
    `http://${u.hostname}:${port}/api/queues/${vhost}/${encodeURIComponent(EVENTS_QUEUE)}/bindings`,
    {
      headers: { authorization: `Basic ${Buffer.from(user).toString('base64')}` },
      signal: AbortSignal.timeout(10_000),
    },
  );
  if (!res.ok) throw new Error(`GET bindings: HTTP ${res.status}`);
  return ((await res.json()) as { source: string; routing_key: string }[])
    .filter((b) => b.source === CREW_EVENTS_EXCHANGE)
    .map((b) => b.routing_key)
    .sort();
}

describe('the dispatcher’s event queue', () => {
  it('is bound to the webhook event types only, and the dispatcher may bind no other key', async () => {
    expect(await eventBindings()).toEqual([...EVENT_TYPES].sort());

    // The topology (declared on every connect) binds within the dispatcher's topic permission.
    const amqp = dispatcher.app.get(AmqpConnection);
    await amqp.withChannel(declareWebhookTopology([60_000]));
    expect(await eventBindings()).toEqual([...EVENT_TYPES].sort());
    // `#` (every routing key, the internal events too) is refused: 403 ACCESS_REFUSED closes the channel.
    const refused = await amqp
      .withChannel((ch) => ch.bindQueue(EVENTS_QUEUE, CREW_EVENTS_EXCHANGE, '#'))
      .then(
        () => 'bound',
        (err: { code?: number }) => err.code ?? String(err),
      );
    expect(refused).toBe(403);
    expect(await eventBindings()).toEqual([...EVENT_TYPES].sort());
  });

  it('acks and ignores an internal event that still reaches it, and goes on delivering', async () => {
    const amqp = dispatcher.app.get(AmqpConnection);
    const userId = (await createUser(auth)).user_id;
    const internal = { ...newEvent('user.profile.updated', userId), type: 'crew.member.registered' };
    // Straight onto the queue, as a message published before the re-binding would sit there.
    await amqp.publish('', EVENTS_QUEUE, Buffer.from(JSON.stringify(internal)), { messageId: internal.id });

    const path = '/after-internal';
    const partner = await createPartner(auth, { webhookUrl: receiver.endpoint(path) });
    await grantConsent(auth, userId, partner.client_id, ['profile:read']);
    const event = newEvent('user.profile.updated', userId);
    await dispatcher.publish(event);
    await eventually(async () => (receiver.requests(path).length > 0 ? true : undefined));

    // A requeued message would be back on the queue, or parked after its second failure.
    await new Promise((r) => setTimeout(r, 1000));
    const [queued, parked] = await amqp.withChannel(async (ch) => [
      await ch.checkQueue(EVENTS_QUEUE),
      await ch.checkQueue(parkingQueue(EVENTS_QUEUE)),
    ]);
    expect(queued.messageCount).toBe(0);
    expect(parked.messageCount).toBe(0);
    expect(await deliveriesOf(dispatcher.db, internal.id)).toEqual([]);
  });
});
