import { EVENT_TYPES, type ServiceEvent } from './messaging';
import { ContractViolation } from './rpc/rpc';
import { readOneOf, readOptionalString, readRecord, readString } from './validate';
import { API_LIMITS } from './limits';

const NAME = 'crew.events';

/** The validator every consumer of `crew.events` runs on each message before acting on it. */
export function parseServiceEvent(input: unknown): ServiceEvent {
  const r = readRecord(NAME, input);
  const id = readString(NAME, r, 'id', 100);
  if (!id.startsWith('evt_')) throw new ContractViolation(NAME, '`id` must start with evt_');
  const type = readOneOf(NAME, r, 'type', EVENT_TYPES);
  const user_id = readString(NAME, r, 'user_id', API_LIMITS.idMaxLength);
  const created_at = readString(NAME, r, 'created_at', 64);
  if (Number.isNaN(Date.parse(created_at))) {
    throw new ContractViolation(NAME, '`created_at` must be an ISO 8601 time');
  }
  const client_id = readOptionalString(NAME, r, 'client_id', API_LIMITS.idMaxLength);
  const delivery_id = readOptionalString(NAME, r, 'delivery_id', 100);
  if (delivery_id !== undefined && !delivery_id.startsWith('dlv_')) {
    throw new ContractViolation(NAME, '`delivery_id` must start with dlv_');
  }
  return {
    id,
    type,
    user_id,
    created_at,
    ...(client_id === undefined ? {} : { client_id }),
    ...(delivery_id === undefined ? {} : { delivery_id }),
  };
}
