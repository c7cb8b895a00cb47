import { API_LIMITS } from '@svc/contracts';
import { FieldReader } from '@svc/platform';

export interface VesselsQuery {
  readonly limit?: number;
  readonly cursor?: string;
}

/**
 * `GET /v1/me/vessels?limit=&cursor=`: `limit` an integer 1-200 (decisions.md: 422 with an
 * `errors` entry for `limit` otherwise), `cursor` a previous `next_cursor` (checked when decoded).
 * Other parameters are ignored, as a GET's cache-busters commonly are.
 */
export function parseVesselsQuery(query: unknown): VesselsQuery {
  const reader = FieldReader.query(query);
  const limit = reader.queryInteger('limit', 1, API_LIMITS.pageLimitMax);
  const cursor = reader.queryString('cursor', API_LIMITS.cursorMaxLength);
  reader.done();
  return { limit, cursor };
}
