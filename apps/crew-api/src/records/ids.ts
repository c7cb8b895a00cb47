import { randomBytes } from 'node:crypto';

/** Prefixed, random, URL-safe identifiers (decisions.md, Identifiers): `vp_…`, `ste_…`, `evt_…`, `dlv_…`, `usr_…`. */
export type IdPrefix = 'vp' | 'ste' | 'evt' | 'dlv' | 'usr';

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBytes(15).toString('base64url')}`;
}
