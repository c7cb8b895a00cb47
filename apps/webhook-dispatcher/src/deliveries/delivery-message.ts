import { ContractViolation, readRecord, readString } from '@svc/contracts';

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
