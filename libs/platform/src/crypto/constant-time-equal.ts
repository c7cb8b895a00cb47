import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/** Whether `presented` is the string `expected`, in constant time whatever the lengths (both hashed first). */
export function constantTimeEqual(expected: string, presented: unknown): boolean {
  if (typeof presented !== 'string') return false;
  return timingSafeEqual(digest(expected), digest(presented));
}
