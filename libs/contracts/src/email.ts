/** How every app stores and compares e-mail addresses: trimmed and lower-cased. */
export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

/**
 * The one definition of an e-mail address the API takes: ajv-formats' full-mode `format: email`,
 * spelt without flags so the description states it as `pattern` and both agree on every input.
 */
const ATOM = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+";
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?';
export const EMAIL_PATTERN = `^${ATOM}(?:\\.${ATOM})*@(?:${LABEL}\\.)+${LABEL}$`;

const EMAIL = new RegExp(EMAIL_PATTERN);

export function isEmailAddress(text: string): boolean {
  return EMAIL.test(text);
}
