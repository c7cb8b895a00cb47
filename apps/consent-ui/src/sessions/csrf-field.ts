/** One field of a posted form, whatever it holds (the caller checks its shape). */
export function formField(body: unknown, name: string): unknown {
  return typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[name] : undefined;
}

/** The CSRF token of a posted form that carries nothing else of interest (sign-out, disconnect). */
export function parseCsrfField(body: unknown): unknown {
  return formField(body, 'csrf');
}
