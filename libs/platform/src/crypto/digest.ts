import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/** SHA-256 of a string's UTF-8 bytes, lower-case hex: how every digest of a secret is stored and sent. */
export function sha256Hex(value: string): string {
  return digest(value).toString('hex');
}

/** Whether `presented` is the string `expected`, in constant time whatever the lengths (both hashed first). */
export function constantTimeEqual(expected: string, presented: unknown): boolean {
  if (typeof presented !== 'string') return false;
  return timingSafeEqual(digest(expected), digest(presented));
}
