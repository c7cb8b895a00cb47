import { createHash } from 'node:crypto';

/**
 * SHA-256 of a string's UTF-8 bytes, lower-case hex: the form in which the service stores, caches and
 * sends every digest of a secret (access and refresh tokens, codes, client secrets, session ids).
 */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}
