import { randomBytes } from 'node:crypto';

/** Seat ids (decisions.md, Identifiers): prefixed, random, URL-safe. */
export function newSeatId(): string {
  return `sps_${randomBytes(15).toString('base64url')}`;
}
