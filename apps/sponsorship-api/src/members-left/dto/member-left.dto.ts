import { API_LIMITS } from '@svc/contracts';
import { FieldReader } from '@svc/platform';

export const MEMBER_LEFT_REASONS = ['account_deleted', 'membership_lapsed'] as const;
export type MemberLeftReason = (typeof MEMBER_LEFT_REASONS)[number];

export interface MemberLeft {
  readonly userId: string | null;
  readonly externalRef: string | null;
  readonly reason: MemberLeftReason | null;
}

function nullableString(reader: FieldReader, body: Record<string, unknown>, field: string, max: number) {
  if (body[field] === undefined || body[field] === null) return null;
  return reader.string(field, { max });
}

/**
 * `POST /v1/partners/members/left` `{user_id?, external_ref?, reason?}` (each may be null). That
 * neither identifies anybody is the service's 400, decided once the body is well-formed.
 */
export function parseMemberLeft(body: unknown): MemberLeft {
  const reader = FieldReader.body(body).onlyFields(['user_id', 'external_ref', 'reason']);
  const fields = body as Record<string, unknown>;
  const userId = nullableString(reader, fields, 'user_id', API_LIMITS.idMaxLength);
  const externalRef = nullableString(reader, fields, 'external_ref', API_LIMITS.refMaxLength);
  let reason: MemberLeftReason | null = null;
  if (fields.reason !== undefined && fields.reason !== null) {
    if (
      typeof fields.reason === 'string' &&
      (MEMBER_LEFT_REASONS as readonly string[]).includes(fields.reason)
    ) {
      reason = fields.reason as MemberLeftReason;
    } else {
      reader.fail('reason', `must be one of ${MEMBER_LEFT_REASONS.join(', ')}, or null`);
    }
  }
  reader.done();
  return { userId, externalRef, reason };
}

export interface MemberLeftResponse {
  readonly user_id: string;
  readonly ended: boolean;
  readonly downgraded: boolean;
}
