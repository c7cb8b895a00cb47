/** The sign-in form as posted (application/x-www-form-urlencoded). */
export interface LoginForm {
  readonly email: string;
  readonly password: string;
  readonly csrf: unknown;
  readonly returnTo: unknown;
}

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
