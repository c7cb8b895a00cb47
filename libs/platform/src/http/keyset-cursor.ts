/** What every list's keyset cursor shares: base64url JSON, µs positions; each list checks its own fields. */

/** An instant to the microsecond, as a position keeps it: `2026-01-31T12:00:00.123456Z`. */
const EXACT_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

export function isExactInstant(value: unknown): value is string {
  return typeof value === 'string' && EXACT_INSTANT.test(value) && !Number.isNaN(Date.parse(value));
}

export function encodeCursorFields(fields: Readonly<Record<string, unknown>>): string {
  return Buffer.from(JSON.stringify(fields)).toString('base64url');
}

/** The fields `encodeCursorFields` wrote, or undefined for anything that is not such a text. */
export function decodeCursorFields(text: string, maxLength: number): Record<string, unknown> | undefined {
  if (text.length > maxLength || !/^[A-Za-z0-9_-]+$/.test(text)) return undefined;
  try {
    const data: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    return typeof data === 'object' && data !== null ? (data as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
