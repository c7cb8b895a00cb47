/**
 * Timestamps leave PostgreSQL as text, formatted there: the API shows ISO 8601 UTC with `Z` and
 * milliseconds, and ETags, cursors and write times keep the full microseconds (two writes in one
 * millisecond must still differ). Nothing is lost through a JavaScript Date on the way.
 */
export function isoMs(expr: string): string {
  return `to_char(${expr} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

export function isoUs(expr: string): string {
  return `to_char(${expr} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
}

/** An instant with microseconds, `2026-01-31T12:00:00.123456Z`, as isoUs() renders it. */
export const ISO_US = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/** The API's form of an isoUs() instant: milliseconds, truncated as Date#toISOString truncates. */
export function usToMs(isoUsText: string): string {
  return `${isoUsText.slice(0, 23)}Z`;
}
