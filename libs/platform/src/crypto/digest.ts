import { hash, timingSafeEqual } from 'node:crypto';

// The one-shot hash: no Hash object per call, on every authenticated request.
const digest = (value: string): Buffer => hash('sha256', value, 'buffer');

/** SHA-256 of a string's UTF-8 bytes, lower-case hex: how every digest of a secret is stored and sent. */
export function sha256Hex(value: string): string {
  return hash('sha256', value, 'hex');
}

/** Whether `presented` is the string `expected`, in constant time whatever the lengths (both hashed first). */
export function constantTimeEqual(expected: string, presented: unknown): boolean {
  if (typeof presented !== 'string') return false;
  return timingSafeEqual(digest(expected), digest(presented));
}
