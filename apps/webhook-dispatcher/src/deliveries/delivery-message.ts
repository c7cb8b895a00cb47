import { ContractViolation, readRecord, readString } from '@svc/contracts';
import { traceHeaders, type AmqpConnection } from '@svc/platform';

/** The message of DELIVERIES_QUEUE: run attempt `attempt` of this delivery. */
export interface DeliveryMessage {
  readonly delivery_id: string;
  readonly attempt: number;
}

const NAME = 'webhooks.deliveries';

export function parseDeliveryMessage(input: unknown): DeliveryMessage {
  const r = readRecord(NAME, input);
  const delivery_id = readString(NAME, r, 'delivery_id', 100);
  const attempt = r.attempt;
  if (typeof attempt !== 'number' || !Number.isInteger(attempt) || attempt < 1) {
    throw new ContractViolation(NAME, '`attempt` must be a positive integer');
  }
  return { delivery_id, attempt };
}

/** Puts attempt `message.attempt` of a delivery on `queue` (a retry queue). */
export function enqueueAttempt(amqp: AmqpConnection, queue: string, message: DeliveryMessage): Promise<void> {
  // A retry carries the trace of the attempt that queued it (through the delay queue's
  // dead-lettering, which keeps headers), so all attempts of a delivery share one trace.
  const headers = traceHeaders();
  return amqp.publish('', queue, Buffer.from(JSON.stringify(message)), {
    messageId: `${message.delivery_id}:${message.attempt}`,
    ...(headers && { headers }),
  });
}
