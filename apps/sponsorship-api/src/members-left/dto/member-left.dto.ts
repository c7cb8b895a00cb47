import { MEMBER_LEFT_BODY, type FieldValues } from '@svc/contracts';
import { FieldReader } from '@svc/platform';

export type MemberLeftReason = NonNullable<FieldValues<typeof MEMBER_LEFT_BODY>['reason']>;

export interface MemberLeft {
  readonly userId: string | null;
  readonly externalRef: string | null;
  readonly reason: MemberLeftReason | null;
}

/** `POST /v1/partners/members/left` (that neither id names anybody is the service's 400). */
export function parseMemberLeft(body: unknown): MemberLeft {
  const reader = FieldReader.body(body);
  const { user_id, external_ref, reason } = reader.fields(MEMBER_LEFT_BODY);
  reader.done();
  return { userId: user_id, externalRef: external_ref, reason };
}
