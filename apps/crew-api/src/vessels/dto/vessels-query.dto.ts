import { PAGE_QUERY, type FieldValues } from '@svc/contracts';
import { FieldReader } from '@svc/platform';

export type VesselsQuery = Partial<FieldValues<typeof PAGE_QUERY>>;

/** `GET /v1/me/vessels?limit=&cursor=`; the cursor's signature is checked when it is decoded. */
export function parseVesselsQuery(query: unknown): VesselsQuery {
  const reader = FieldReader.query(query);
  const page = reader.fields(PAGE_QUERY);
  reader.done();
  return page;
}
