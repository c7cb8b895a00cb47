/** Values of the environment in the built docs pages, filled in by the generator at start-up. */
export const DOCS_PLACEHOLDERS = {
  publicBaseUrl: '@@PUBLIC_BASE_URL@@',
  docsUrl: '@@DOCS_URL@@',
} as const;

export const escapeHtml = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** A built page with this environment's base URL and DOCS_URL (HTML-escaped: they land in markup). */
export function fillPlaceholders(html: string, values: { publicBaseUrl: string; docsUrl: string }): string {
  return html
    .split(DOCS_PLACEHOLDERS.publicBaseUrl)
    .join(escapeHtml(values.publicBaseUrl))
    .split(DOCS_PLACEHOLDERS.docsUrl)
    .join(escapeHtml(values.docsUrl));
}
