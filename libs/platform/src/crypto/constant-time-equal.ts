import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/**
 * Whether `presented` is the string `expected`, in time that depends on neither where they differ nor
 * their lengths: both sides are hashed first and the two 32-byte digests compared with
 * `timingSafeEqual` (docs/rules.md: comparisons of secrets are constant-time). Anything but a string
 * (a missing form field, a repeated one) is never equal.
 */
export function constantTimeEqual(expected: string, presented: unknown): boolean {
  if (typeof presented !== 'string') return false;
  return timingSafeEqual(digest(expected), digest(presented));
}
