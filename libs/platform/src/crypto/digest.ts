import { createHash } from 'node:crypto';

/** SHA-256 of a string's UTF-8 bytes, lower-case hex: how every digest of a secret is stored and sent. */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}
