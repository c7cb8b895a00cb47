/** The CSRF token of a posted form that carries nothing else of interest (sign-out, disconnect). */
export function parseCsrfField(body: unknown): unknown {
  return typeof body === 'object' && body !== null ? (body as Record<string, unknown>).csrf : undefined;
}
