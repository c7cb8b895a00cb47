import { sha256Hex } from '@svc/platform';

export const EXPORT_PATH = '/account/export';

/**
 * The token that the "Download my data" link carries: derived one-way from the session's CSRF
 * token, so it lives and dies with the session, is known only to pages of this origin, and a
 * copy of it (browser history, a log) gives away nothing of the CSRF token itself. It stops a
 * cross-site page from starting the download in browsers that send no Sec-Fetch-Site header.
 */
export function exportToken(csrfToken: string): string {
  return sha256Hex(`data export\n${csrfToken}`);
}

export function exportHref(csrfToken: string): string {
  return `${EXPORT_PATH}?token=${exportToken(csrfToken)}`;
}
