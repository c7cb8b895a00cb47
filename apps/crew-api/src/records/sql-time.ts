import { GroupBatcher } from '@svc/platform';

/**
 * Timestamps leave PostgreSQL as UTC wall-time text (~3× cheaper than `to_char`), never a Date:
 * milliseconds for display, microseconds (`exact`) for ETags, cursors and write times.
 */
export function utc(expr: string): string {
  return `(${expr} AT TIME ZONE 'UTC')::text`;
}

/** An instant as the API shows it (`iso`, ms) and as it is compared and stored (`exact`, µs). */
export interface Instant {
  readonly iso: string;
  readonly exact: string;
}

/** `2026-01-31 12:00:00.1234`: a timestamp's text in PostgreSQL's default DateStyle (ISO). */
const PG_UTC = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?$/;

/** Reads a utc() column. Another DateStyle than ISO is a deployment mistake: it throws. */
export function instant(text: string): Instant {
  const m = PG_UTC.exec(text);
  if (!m) throw new Error(`unexpected timestamp text from PostgreSQL: "${text}" (DateStyle must be ISO)`);
  const fraction = (m[3] ?? '').padEnd(6, '0');
  return { iso: `${m[1]}T${m[2]}.${fraction.slice(0, 3)}Z`, exact: `${m[1]}T${m[2]}.${fraction}Z` };
}

/** The API's form of an exact instant: milliseconds, truncated as Date#toISOString truncates. */
export function usToMs(isoUsText: string): string {
  return `${isoUsText.slice(0, 23)}Z`;
}

/** SQL: the vessel-period versions valid at the instant `at` (`alias`: the table's, if any). */
export function periodsValidAt(at: string, alias?: string): string {
  const c = alias ? `${alias}.` : '';
  return `${c}valid_from <= ${at} AND (${c}valid_to IS NULL OR ${c}valid_to > ${at})`;
}

/**
 * Lookups by user id: those of one event-loop turn share one `read` of the distinct ids, 8 reads in
 * flight at most: under load the round trip, not the row, is the cost.
 */
export function memberLookups<R extends { readonly userId: string }>(
  read: (userIds: string[]) => Promise<R[]>,
): GroupBatcher<string, R | undefined> {
  return new GroupBatcher<string, R | undefined>(
    async (userIds) => {
      const rows = await read([...new Set(userIds)]);
      const byId = new Map(rows.map((r) => [r.userId, r]));
      return userIds.map((id) => byId.get(id));
    },
    100,
    8,
    true,
  );
}
