import { EVENT_TYPES, type ServiceEvent } from './messaging';
import { ContractViolation } from './rpc/rpc';
import { oneOf, optional, optionalText, readFields, readString, text, type FieldRead } from './validate';
import { API_LIMITS } from './limits';

const prefixedId =
  (prefix: string): FieldRead<string> =>
  (contract, record, field) => {
    const value = readString(contract, record, field, 100);
    if (!value.startsWith(prefix))
      throw new ContractViolation(contract, `\`${field}\` must start with ${prefix}`);
    return value;
  };

const isoTime: FieldRead<string> = (contract, record, field) => {
  const value = readString(contract, record, field, 64);
  if (Number.isNaN(Date.parse(value))) {
    throw new ContractViolation(contract, `\`${field}\` must be an ISO 8601 time`);
  }
  return value;
};

/** The validator every consumer of `crew.events` runs on each message before acting on it. */
export function parseServiceEvent(input: unknown): ServiceEvent {
  return readFields('crew.events', input, {
    id: prefixedId('evt_'),
    type: oneOf(EVENT_TYPES),
    user_id: text(API_LIMITS.idMaxLength),
    created_at: isoTime,
    client_id: optionalText(API_LIMITS.idMaxLength),
    delivery_id: optional(prefixedId('dlv_')),
  });
}
