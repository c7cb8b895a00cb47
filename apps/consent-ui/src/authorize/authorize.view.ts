import { assertUnreachable } from '@svc/platform';
import { html, type SafeHtml } from '../views/html';
import { layout } from '../views/layout';
import { page, redirect, type WebResult } from '../views/web-result';
import { PARAM_FIELD_PREFIX } from './authorize-request';
import type { AuthorizePage, DecisionResult } from './authorize.service';

type ConsentPage = Extract<AuthorizePage, { outcome: 'consent' }>;
type ErrorPage = Extract<AuthorizePage, { outcome: 'error_page' }>;

/** The partner's host, so the member sees where the answer goes (anti-phishing). */
function returnHost(params: Readonly<Record<string, string>>): string | undefined {
  try {
    return params.redirect_uri ? new URL(params.redirect_uri).host : undefined;
  } catch {
    return undefined;
  }
}

export function consentPage(view: ConsentPage): SafeHtml {
  const host = returnHost(view.params);
  const hidden = Object.entries(view.params).map(
    ([name, value]) => html` <input type="hidden" name="${PARAM_FIELD_PREFIX}${name}" value="${value}" />`,
  );
  return layout(
    `Connect ${view.client_name}`,
    html`<h1><span class="partner">${view.client_name}</span> wants to read your crew record</h1>
      <p class="lead">If you allow it, ${view.client_name} will be able to see:</p>
      <ul class="scopes">
        ${view.scopes.map((s) => html` <li>${s.description}</li> `)}
      </ul>
      <p class="muted">
        ${host ? html`After you choose, you will return to <strong>${host}</strong>. ` : null}You can
        disconnect ${view.client_name} at any time under Connected partners.
      </p>
      <form method="post" action="/oauth/authorize" class="actions">
        <input type="hidden" name="csrf" value="${view.csrfToken}" />${hidden}
        <button type="submit" name="decision" value="allow" class="primary">Allow</button>
        <button type="submit" name="decision" value="deny" class="secondary">Deny</button>
      </form>`,
  );
}

/** Unknown client or unregistered redirect URI: explained here, never redirected (RFC 6749 §4.1.2.1). */
export function invalidRequestPage(view: ErrorPage, requestId: string): SafeHtml {
  return layout(
    'This request cannot be completed',
    html`<h1>This request cannot be completed</h1>
      <p class="lead">
        The site that sent you here asked for access in a way we cannot accept, so we have not sent you back
        to it.
      </p>
      <p class="alert" role="alert">${view.error_description}</p>
      <p class="muted">
        Please return to the partner’s site and try again, or contact the partner. Error:
        <code>${view.error}</code> · Reference: <code>${requestId}</code>
      </p>`,
  );
}

export function authorizePageResult(view: AuthorizePage, requestId: string): WebResult {
  switch (view.outcome) {
    case 'sign_in':
      return redirect(302, view.location);
    case 'redirect':
      return redirect(302, view.redirect_to);
    case 'consent':
      return page(200, consentPage(view));
    case 'error_page':
      return page(400, invalidRequestPage(view, requestId));
    default:
      return assertUnreachable(view);
  }
}

export function decisionResult(result: DecisionResult, requestId: string): WebResult {
  switch (result.outcome) {
    case 'redirect':
      // 303, never 307: a 307 would re-post the form to the partner (RFC 9700 §4.12).
      return redirect(303, result.redirect_to);
    case 'error_page':
      return page(400, invalidRequestPage(result, requestId));
    default:
      return assertUnreachable(result);
  }
}
