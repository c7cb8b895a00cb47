import { PROBE_PATHS, type ProblemCode } from '@svc/contracts';
import { assertUnreachable, type ApiProblem, type ErrorRenderer } from '@svc/platform';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AuthorizeException } from '../authorize/authorize.exception';
import { ConnectionsException } from '../connections/connections.exception';
import { SessionException } from '../sessions/sessions.exception';
import { html, type SafeHtml } from './html';
import { layout } from './layout';
import { applyPageHeaders } from './web-result';

interface ErrorContent {
  readonly title: string;
  readonly message: string;
  readonly link?: { readonly href: string; readonly text: string };
}

const CONNECTIONS_LINK = { href: '/account/connections', text: 'Go to your connected partners' };

/** A feature exception as the platform's error filter answers it (its Problem), and its page. */
interface DomainError {
  readonly code: ProblemCode;
  readonly detail: string;
  readonly content: ErrorContent;
}

const DOMAIN_ERRORS: Readonly<
  Record<SessionException['code'] | AuthorizeException['code'] | ConnectionsException['code'], DomainError>
> = {
  session_required: {
    code: 'insufficient_scope',
    detail: 'Signing in is required for this action.',
    content: {
      title: 'Your session has ended',
      message: 'Nothing was changed. Sign in again, then repeat what you were doing.',
      link: { href: '/login', text: 'Sign in' },
    },
  },
  csrf_mismatch: {
    code: 'insufficient_scope',
    detail: 'The form’s CSRF token is missing or wrong.',
    content: {
      title: 'This form has expired',
      message:
        'For your protection nothing was changed: the form did not come from this page. Go back, reload the page and try again.',
    },
  },
  invalid_decision: {
    code: 'bad_request',
    detail: 'The consent form carried no valid decision.',
    content: {
      title: 'Choose Allow or Deny',
      message: 'The form did not say whether you allow the partner. Go back and press Allow or Deny.',
    },
  },
  disconnect_unavailable: {
    code: 'service_unavailable',
    detail: 'The partner could not be disconnected right now.',
    content: {
      title: 'Could not disconnect right now, please try again',
      message: 'The partner is still connected. Nothing was changed; trying again is safe.',
      link: CONNECTIONS_LINK,
    },
  },
};

export function domainError(error: unknown): DomainError | undefined {
  const known =
    error instanceof SessionException ||
    error instanceof AuthorizeException ||
    error instanceof ConnectionsException;
  return known ? DOMAIN_ERRORS[error.code] : undefined;
}

function contentForProblem(code: ProblemCode): ErrorContent {
  switch (code) {
    case 'not_found':
      return {
        title: 'Page not found',
        message: 'There is no page at this address.',
        link: CONNECTIONS_LINK,
      };
    case 'method_not_allowed':
      return { title: 'This page cannot be used this way', message: 'Go back and use the page’s buttons.' };
    case 'payload_too_large':
      return { title: 'The form is too large', message: 'The form you sent is larger than we accept.' };
    case 'unsupported_media_type':
    case 'bad_request':
    case 'invalid_request':
      return { title: 'The request could not be read', message: 'Go back, reload the page and try again.' };
    case 'service_unavailable':
    case 'bad_gateway':
    case 'gateway_timeout':
      return {
        title: 'The service is temporarily unavailable',
        message: 'We could not complete your request just now. Please try again in a moment.',
      };
    case 'rate_limit_exceeded':
      return { title: 'Too many requests', message: 'Please wait a moment and try again.' };
    case 'invalid_token':
    case 'insufficient_scope':
      return {
        title: 'You are not allowed to do this',
        message: 'Sign in again, then repeat what you were doing.',
        link: { href: '/login', text: 'Sign in' },
      };
    case 'internal_error':
    case 'conflict':
    case 'webhook_not_registered':
    case 'seat_quota_exceeded':
    case 'entitlement_write_failed':
      return {
        title: 'Something went wrong',
        message: 'Please try again. If it keeps happening, contact support and quote the reference below.',
      };
    default:
      return assertUnreachable(code);
  }
}

export function errorPage(content: ErrorContent, status: number, requestId: string): SafeHtml {
  return layout(
    content.title,
    html`<h1>${content.title}</h1>
      <p class="lead">${content.message}</p>
      ${content.link ? html`<p><a href="${content.link.href}">${content.link.text}</a></p>` : null}
      <p class="muted">Error ${status} · Reference for support: <code>${requestId}</code></p>`,
  );
}

/**
 * Every error on a consent-ui page becomes an HTML page with the platform's classification
 * (status, and headers such as `Allow`) and the request id to quote to support. The probes keep
 * their Problem Details.
 */
export const renderConsentUiError: ErrorRenderer = (
  error: unknown,
  problem: ApiProblem,
  request: FastifyRequest,
  reply: FastifyReply,
): boolean => {
  const path = request.url.split('?')[0];
  if ((PROBE_PATHS as readonly string[]).includes(path)) return false;
  const content = domainError(error)?.content ?? contentForProblem(problem.code);
  reply.status(problem.status);
  for (const [name, value] of Object.entries(problem.extras.headers ?? {})) reply.header(name, value);
  applyPageHeaders(reply);
  reply.header('x-request-id', request.id);
  reply.header('content-type', 'text/html; charset=utf-8');
  void reply.send(errorPage(content, problem.status, request.id).value);
  return true;
};
