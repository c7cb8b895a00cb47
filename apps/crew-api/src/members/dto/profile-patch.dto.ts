import type { ProfileChanges } from '../members.repository';
import { API_LIMITS } from '@svc/contracts';
import { FieldReader } from '@svc/platform';

const FIELDS = ['name', 'role', 'country', 'photo_url'] as const;

/** `PATCH .../profile`: at least one of `name`, `role`, `country` and `photo_url` (null removes the photo). */
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
