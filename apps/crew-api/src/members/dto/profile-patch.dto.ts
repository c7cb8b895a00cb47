import type { ProfileChanges } from '../members.repository';
import { API_LIMITS } from '@svc/contracts';
import { FieldReader } from '@svc/platform';

const FIELDS = ['name', 'role', 'country', 'photo_url'] as const;

/**
 * `PATCH /internal/v1/crew/{user_id}/profile`: any of `name`, `role`, `country` (non-empty text,
 * trimmed) and `photo_url` (an http(s) URL, or null to remove the photo); at least one.
 */
export function parseProfilePatch(body: unknown): ProfileChanges {
  const reader = FieldReader.body(body).onlyFields(FIELDS);
  if (!FIELDS.some((f) => reader.has(f)))
    reader.fail('body', `must contain at least one of ${FIELDS.join(', ')}`);
  const changes: ProfileChanges = {
    name: reader.optionalString('name', { max: 200 }),
    role: reader.optionalString('role', { max: 100 }),
    country: reader.optionalString('country', { max: 100 }),
    photoUrl: reader.has('photo_url')
      ? reader.nullableUrl('photo_url', API_LIMITS.photoUrlMaxLength)
      : undefined,
  };
  reader.done();
  return changes;
}
