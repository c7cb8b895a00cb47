import { assertUnreachable } from '@svc/platform';
import { html, type SafeHtml } from '../views/html';
import { layout } from '../views/layout';
import { page, redirect, type WebResult } from '../views/web-result';
import type { LoginFormState, LoginProblem, SignInOutcome, SignOutPage } from './login.service';

function problemText(
  problem: LoginProblem,
  retryAfterSeconds: number | undefined,
): { status: number; message: string } {
  switch (problem) {
    case 'invalid_credentials':
      return { status: 401, message: 'Email or password is incorrect.' };
    case 'missing_fields':
      return { status: 400, message: 'Enter your email and password.' };
    case 'form_expired':
      return { status: 403, message: 'The sign-in form expired. Please sign in again.' };
    case 'too_many_attempts': {
      const minutes = Math.max(1, Math.ceil((retryAfterSeconds ?? 60) / 60));
      return {
        status: 429,
        message: `Too many failed sign-in attempts. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
      };
    }
    default:
      return assertUnreachable(problem);
  }
}

export function loginPage(form: LoginFormState): SafeHtml {
  const alert = form.problem
    ? html`<p class="alert" role="alert">${problemText(form.problem, form.retryAfterSeconds).message}</p>`
    : null;
  return layout(
    'Sign in',
    html`<h1>Sign in</h1>
      <p class="lead">Sign in to manage your crew record and the partners you share it with.</p>
      ${alert}
      <form method="post" action="/login" class="stack">
        <input type="hidden" name="csrf" value="${form.csrfToken}" />
        <input type="hidden" name="return_to" value="${form.returnTo}" />
        <label for="email">Email</label>
        <input id="email" name="email" type="email" autocomplete="username" required value="${form.email}" />
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required />
        <button type="submit" class="primary">Sign in</button>
      </form>`,
  );
}

export function loginFormResult(form: LoginFormState, cookies: readonly string[]): WebResult {
  if (!form.problem) return page(200, loginPage(form), cookies);
  return {
    kind: 'page',
    status: problemText(form.problem, form.retryAfterSeconds).status,
    body: loginPage(form),
    cookies,
    // RFC 6585 §4: a 429 may say how long to wait.
    ...(form.retryAfterSeconds === undefined
      ? {}
      : { headers: { 'retry-after': String(form.retryAfterSeconds) } }),
  };
}

export function signInResult(outcome: SignInOutcome): WebResult {
  switch (outcome.outcome) {
    case 'signed_in':
      // 303: the browser follows with a GET and never re-posts the password (RFC 9700 §4.12).
      return redirect(303, outcome.returnTo, outcome.cookies);
    case 'retry':
      return loginFormResult(outcome.form, outcome.cookies);
    default:
      return assertUnreachable(outcome);
  }
}

export function signOutForm(csrfToken: string, label = 'Sign out'): SafeHtml {
  return html`<form method="post" action="/logout" class="inline">
    <input type="hidden" name="csrf" value="${csrfToken}" />
    <button type="submit" class="secondary">${label}</button>
  </form>`;
}

export function signOutPageResult(outcome: SignOutPage): WebResult {
  switch (outcome.outcome) {
    case 'confirm':
      return page(
        200,
        layout(
          'Sign out',
          html`<h1>Sign out</h1>
            <p class="lead">Sign out of your crew record on this browser.</p>
            ${signOutForm(outcome.csrfToken)}`,
        ),
      );
    case 'signed_out':
      return signedOutResult(outcome.cookies);
    default:
      return assertUnreachable(outcome);
  }
}

export function signedOutResult(cookies: readonly string[]): WebResult {
  return redirect(303, '/login', cookies);
}
