import { html, type SafeHtml } from './html';

export const STYLESHEET_PATH = '/account/assets/consent.css';

/**
 * The frame of every page: a narrow card for a crew member's forms, a wide one for the partner
 * portal's desk (tables of deliveries). No inline script or style anywhere: the Content-Security-Policy
 * (`default-src 'none'; style-src 'self'`) allows only the one stylesheet served by this app.
 */
export function layout(title: string, body: SafeHtml, width: 'narrow' | 'wide' = 'narrow'): SafeHtml {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title}</title>
        <link rel="stylesheet" href="${STYLESHEET_PATH}" />
      </head>
      <body>
        <main class="${width === 'wide' ? 'card card-wide' : 'card'}">${body}</main>
      </body>
    </html> `;
}
