/**
 * How every app stores and compares e-mail addresses (sign-in, crew records, seats): trimmed and
 * lower-cased, so one member's address matches across apps.
 */
export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}
