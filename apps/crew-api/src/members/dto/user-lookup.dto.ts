import { API_LIMITS, normaliseEmail } from '@svc/contracts';
import { FieldReader } from '@svc/platform';
import type { MemberProfileResponse } from './member-profile.response';

/** `GET /internal/v1/users?email=…` */
export function parseUserLookup(query: unknown): { readonly email: string } {
  const reader = FieldReader.query(query).onlyFields(['email']);
  const email = reader.queryString('email', API_LIMITS.emailMaxLength);
  if (email === undefined) {
    if (!reader.has('email')) reader.fail('email', 'is required');
  } else if (!/^[^\s@]+@[^\s@]+$/.test(email.trim())) {
    reader.fail('email', 'must be an e-mail address');
  }
  reader.done();
  return { email: normaliseEmail(email ?? '') };
}

export type UserLookupResponse = Pick<MemberProfileResponse, 'user_id' | 'email'>;
