import type { FastifyReply } from 'fastify';
import type { SafeHtml } from './html';

/**
 * Headers of every page and redirect of consent-ui.
 * - No framing: a partner could overlay the consent screen and trick a click on "Allow" (RFC 6749
 *   §10.13, RFC 9700 §4.16).
 * - No `form-action`: Chromium applies it to the redirect after the consent form's POST.
 * - No referrer: the request's URL and the redirect carrying the code must not leak (RFC 9700 §4.2).
 * - `no-store`: pages show personal data and CSRF tokens; redirects carry codes.
 */
const PAGE_CSP = "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'";

export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': `${PAGE_CSP}; frame-ancestors 'none'`,
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
};

/** What a controller answers: a page, or a redirect; either may set cookies. */
export type WebResult =
  | {
      readonly kind: 'page';
      readonly status: number;
      readonly body: SafeHtml;
      readonly cookies?: readonly string[];
      readonly headers?: Readonly<Record<string, string>>;
      /**
       * The only origins that may frame this page (the partner portal: the framing origins
       * registered for its partner). Unset or empty: no framing at all.
       */
      readonly frameAncestors?: readonly string[];
    }
  | {
      readonly kind: 'redirect';
      /** 303 after a POST so the browser follows with GET and never re-posts (RFC 9700 §4.12). */
      readonly status: 302 | 303;
      readonly location: string;
      readonly cookies?: readonly string[];
      /** As on a page: a redirect inside a frame is framed too. */
      readonly frameAncestors?: readonly string[];
    };

export function page(status: number, body: SafeHtml, cookies?: readonly string[]): WebResult {
  return { kind: 'page', status, body, cookies };
}

export function redirect(status: 302 | 303, location: string, cookies?: readonly string[]): WebResult {
  return { kind: 'redirect', status, location, cookies };
}

export function applyPageHeaders(reply: FastifyReply): void {
  for (const [name, value] of Object.entries(PAGE_HEADERS)) reply.header(name, value);
}

export function sendResult(reply: FastifyReply, result: WebResult): void {
  applyPageHeaders(reply);
  if (result.cookies && result.cookies.length > 0) reply.header('set-cookie', [...result.cookies]);
  if (result.frameAncestors && result.frameAncestors.length > 0) {
    // CSP frame-ancestors names the origins; X-Frame-Options cannot, so it goes.
    reply.header(
      'content-security-policy',
      `${PAGE_CSP}; frame-ancestors ${result.frameAncestors.join(' ')}`,
    );
    reply.removeHeader('x-frame-options');
  }
  reply.status(result.status);
  switch (result.kind) {
    case 'page':
      for (const [name, value] of Object.entries(result.headers ?? {})) reply.header(name, value);
      reply.header('content-type', 'text/html; charset=utf-8');
      void reply.send(result.body.value);
      return;
    case 'redirect':
      reply.header('location', result.location);
      void reply.send();
      return;
  }
}
