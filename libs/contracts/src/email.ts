/**
 * How every app stores and compares e-mail addresses (sign-in, crew records, seats): trimmed and
 * lower-cased, so one member's address matches across apps.
 */
export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

/**
 * The one definition of an e-mail address the API takes (provisioning): an ASCII dot-atom local
 * part, `@`, and a domain of two or more labels (letters, digits, inner hyphens). It is the
 * expression JSON Schema's `format: email` stands for in the validator the API description is
 * checked with (ajv-formats, full mode), spelt without flags so that the description can state it
 * as `pattern` beside `format` and the two agree on every input. What the parser accepts, the
 * description accepts, and a stored address always reads back as one (normalising keeps it valid).
 */
const ATOM = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+";
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?';
export const EMAIL_PATTERN = `^${ATOM}(?:\\.${ATOM})*@(?:${LABEL}\\.)+${LABEL}$`;

const EMAIL = new RegExp(EMAIL_PATTERN);

export function isEmailAddress(text: string): boolean {
  return EMAIL.test(text);
}
