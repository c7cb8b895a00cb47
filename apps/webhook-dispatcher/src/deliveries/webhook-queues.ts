import { CREW_EVENTS_EXCHANGE, EVENT_TYPES } from '@svc/contracts';
import type { TopologyChannel } from '@svc/platform';

/** crew.events → this queue (the webhook event types only): the events to fan out, one or a pack to a message. */
export const EVENTS_QUEUE = 'webhooks.events';
/** One message per attempt to run: `{delivery_id, attempt}`. */
export const DELIVERIES_QUEUE = 'webhooks.deliveries';
/** Where a message waits out a retry delay before it dead-letters back to DELIVERIES_QUEUE. */
export const retryQueue = (delayMs: number) => `webhooks.retry.${delayMs}`;
/** A handler that failed twice (database or auth-server down) parks its message here a while. */
export const parkingQueue = (queue: string) => `${queue}.parked`;
export const PARKING_MS = 5000;

// Quorum queues (replicated, durable); dead-lettering at-least-once so that a message moving from
// a delay queue back to work is never dropped on the way (it needs overflow reject-publish).
const QUORUM = {
  'x-queue-type': 'quorum',
  'x-dead-letter-strategy': 'at-least-once',
  'x-overflow': 'reject-publish',
};

function deadLetterTo(queue: string) {
  return { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': queue };
}

/** Declares every queue of the dispatcher; runs on every (re)connect. */
export function declareWebhookTopology(delays: readonly number[]) {
  return async (channel: TopologyChannel): Promise<void> => {
    await channel.assertExchange(CREW_EVENTS_EXCHANGE, 'topic', { durable: true });
    // Attempts waiting for their partner's turn are delivery rows, not messages (DeliveryBacklog).
    for (const queue of [EVENTS_QUEUE, DELIVERIES_QUEUE]) {
      await channel.assertQueue(queue, {
        durable: true,
        arguments: { ...QUORUM, ...deadLetterTo(parkingQueue(queue)) },
      });
      await channel.assertQueue(parkingQueue(queue), {
        durable: true,
        arguments: { ...QUORUM, ...deadLetterTo(queue), 'x-message-ttl': PARKING_MS },
      });
    }
    // Only the webhook event types: crew.events also carries internal events (crew.member.registered)
    // that partners never receive. The dispatcher's topic permission lets it bind (and unbind) these
    // keys only, so it cannot remove the `#` binding of deployments made before this: the broker's
    // administrator does, once (docs/operations.md); an internal event it still brings is acked and ignored.
    for (const type of EVENT_TYPES) await channel.bindQueue(EVENTS_QUEUE, CREW_EVENTS_EXCHANGE, type);
    for (const delay of delays) {
      await channel.assertQueue(retryQueue(delay), {
        durable: true,
        arguments: { ...QUORUM, ...deadLetterTo(DELIVERIES_QUEUE), 'x-message-ttl': delay },
      });
    }
  };
}
