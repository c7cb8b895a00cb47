import { API_LIMITS, normaliseEmail } from '@svc/contracts';
import { FieldReader } from '@svc/platform';
import type { CrewMember } from '../crew-member.entity';

const FIELDS = ['user_id', 'email', 'name', 'role', 'country', 'photo_url'] as const;

export type MemberRegistration = Omit<CrewMember, 'userId' | 'recordUpdatedAt'> & {
  /** The member's sign-in identity in auth-server, when it exists already; else a new `usr_…`. */
  readonly userId?: string;
};

/** `POST /internal/v1/crew`: a new crew member's record head (profile), free tier. */
export function parseMemberRegistration(body: unknown): MemberRegistration {
  const reader = FieldReader.body(body).onlyFields(FIELDS);
  const registration: MemberRegistration = {
    userId: reader.optionalString('user_id', {
      max: 100,
      pattern: /^usr_[A-Za-z0-9_-]+$/,
      patternMessage: 'must be a user id (usr_…)',
    }),
    email: normaliseEmail(
      reader.string('email', {
        max: API_LIMITS.emailMaxLength,
        pattern: /^[^\s@]+@[^\s@]+$/,
        patternMessage: 'must be an e-mail address',
      }),
    ),
    name: reader.string('name', { max: 200 }),
    role: reader.string('role', { max: 100 }),
    country: reader.string('country', { max: 100 }),
    photoUrl: reader.has('photo_url') ? reader.nullableUrl('photo_url', API_LIMITS.photoUrlMaxLength) : null,
  };
  reader.done();
  return registration;
}
