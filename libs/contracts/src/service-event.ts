import { EVENT_BATCH_MAX_EVENTS, EVENT_TYPES, type EventBatchEntry, type ServiceEvent } from './messaging';
import { ContractViolation } from './rpc/rpc';
import {
  oneOf,
  optional,
  optionalText,
  readFields,
  readRecord,
  readString,
  text,
  type FieldRead,
} from './validate';
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

/** A batch message's entries, each still to be parsed, so one malformed event does not cost the others. */
export function parseEventBatch(input: unknown): EventBatchEntry[] {
  const contract = 'crew.events batch';
  const events = readRecord(contract, input).events;
  if (!Array.isArray(events) || events.length === 0 || events.length > EVENT_BATCH_MAX_EVENTS) {
    throw new ContractViolation(
      contract,
      `\`events\` must be an array of 1 to ${EVENT_BATCH_MAX_EVENTS} entries`,
    );
  }
  return events.map((entry) => {
    const { message_id, traceparent } = readFields(contract, entry, {
      message_id: text(100),
      traceparent: optionalText(55),
    });
    const payload = (entry as { payload?: unknown }).payload;
    if (typeof payload !== 'object' || payload === null) {
      throw new ContractViolation(contract, '`payload` must be an object');
    }
    return traceparent === undefined ? { message_id, payload } : { message_id, traceparent, payload };
  });
}
