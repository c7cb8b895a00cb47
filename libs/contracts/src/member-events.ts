import { readFields, readRecord, readString, text } from './validate';
import { API_LIMITS } from './limits';

/** crew-api's internal events on `crew.events` (the dispatcher binds only EVENT_TYPES, so partners never see them). */
export const MEMBER_REGISTERED = 'crew.member.registered';

export interface MemberRegisteredEvent {
  readonly id: string;
  readonly type: typeof MEMBER_REGISTERED;
  readonly user_id: string;
  /** Normalised: trimmed, lower-case. */
  readonly email: string;
  readonly name: string;
  readonly created_at: string;
}

export function parseMemberRegistered(input: unknown): MemberRegisteredEvent {
  const name = MEMBER_REGISTERED;
  const r = readRecord(name, input);
  readString(name, r, 'type');
  if (r.type !== MEMBER_REGISTERED) throw new Error(`${name}: unexpected type ${String(r.type)}`);
  const fields = readFields(name, r, {
    id: text(100),
    user_id: text(API_LIMITS.idMaxLength),
    email: text(API_LIMITS.emailMaxLength),
    name: readString,
    created_at: text(40),
  });
  return { ...fields, type: MEMBER_REGISTERED };
}
