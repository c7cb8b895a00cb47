/** The sign-in form as posted (application/x-www-form-urlencoded). */
export interface LoginForm {
  readonly email: string;
  readonly password: string;
  readonly csrf: unknown;
  readonly returnTo: unknown;
}

/** Field limits of the auth.login contract; longer input cannot be a valid credential. */
export const MAX_EMAIL_LENGTH = 320;
export const MAX_PASSWORD_LENGTH = 1024;

export function parseLoginForm(body: unknown): LoginForm {
  const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const text = (value: unknown) => (typeof value === 'string' ? value : '');
  return {
    email: text(fields.email).trim(),
    password: text(fields.password),
    csrf: fields.csrf,
    returnTo: fields.return_to,
  };
}
