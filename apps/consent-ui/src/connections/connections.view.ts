import { assertUnreachable } from '@svc/platform';
import { signOutForm } from '../login/login.view';
import { html, type SafeHtml } from '../views/html';
import { layout } from '../views/layout';
import { page, redirect, type WebResult } from '../views/web-result';
import {
  CONNECTIONS_PATH,
  type ConnectionItem,
  type ConnectionsPage,
  type SponsorshipItem,
} from './connections.service';

type ListPage = Extract<ConnectionsPage, { outcome: 'list' }>;

const MONTHS = 'January February March April May June July August September October November December'.split(
  ' ',
);

/** "5 March 2026, 14:05 UTC": unambiguous wherever the member is; the raw text if unparseable. */
export function formatUtc(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return `${formatDay(iso)}, ${date.toISOString().slice(-13, -8)} UTC`;
}

export function disconnectPath(clientId: string): string {
  return `${CONNECTIONS_PATH}/${encodeURIComponent(clientId)}/disconnect`;
}

function connectionCard(connection: ConnectionItem, csrfToken: string): SafeHtml {
  return html`<li class="connection">
    <h2>${connection.clientName}</h2>
    <p class="muted">
      Connected <time datetime="${connection.connectedAt}">${formatUtc(connection.connectedAt)}</time>
    </p>
    <p>Can see:</p>
    <ul class="scopes">
      ${connection.scopes.map((s) => html` <li>${s}</li> `)}
    </ul>
    <form method="post" action="${disconnectPath(connection.clientId)}" class="inline">
      <input type="hidden" name="csrf" value="${csrfToken}" />
      <button type="submit" class="danger">Disconnect</button>
    </form>
  </li> `;
}

/** "5 March 2026": the day is what matters for a term. */
function formatDay(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return `${date.getUTCDate()} ${MONTHS[date.getUTCMonth()]} ${date.getUTCFullYear()}`;
}

const SPONSORSHIP_STATUS: Readonly<Record<SponsorshipItem['status'], string>> = {
  active: 'Sponsoring you',
  ended: 'Ended',
  cancelled: 'Cancelled by the partner',
};

function sponsorshipRow(s: SponsorshipItem): SafeHtml {
  return html`<tr>
    <th scope="row">${s.partnerName}</th>
    <td><time datetime="${s.since}">${formatDay(s.since)}</time></td>
    <td><time datetime="${s.until}">${formatDay(s.until)}</time></td>
    <td>${SPONSORSHIP_STATUS[s.status]}</td>
  </tr>`;
}

/**
 * Who sponsors (or sponsored) the member's premium: the partners that provisioned a seat for
 * their e-mail address. Closed seats stay listed, so a partner that tried the member's address and
 * removed the seat is visible to them too.
 */
function sponsorshipsSection(sponsorships: ListPage['sponsorships']): SafeHtml {
  const body =
    sponsorships === 'unavailable'
      ? html`<p class="empty">Your sponsorships cannot be shown right now. Try again in a moment.</p>`
      : sponsorships.length === 0
        ? html`<p class="empty">No partner sponsors your membership.</p>`
        : html`<table class="sponsorships">
            <thead>
              <tr>
                <th scope="col">Partner</th>
                <th scope="col">Since</th>
                <th scope="col">Until</th>
                <th scope="col">Status</th>
              </tr>
            </thead>
            <tbody>
              ${sponsorships.map(sponsorshipRow)}
            </tbody>
          </table>`;
  return html`<section aria-labelledby="sponsorships-heading">
    <h2 id="sponsorships-heading">Sponsorships</h2>
    <p class="lead">Partners that pay, or paid, for your premium membership.</p>
    ${body}
  </section>`;
}

export function connectionsPage(view: ListPage): SafeHtml {
  const list =
    view.connections.length === 0
      ? html`<p class="empty">
          You have not connected any partners. When you allow a partner to read your crew record, it appears
          here.
        </p>`
      : html`<ul class="connections">
          ${view.connections.map((c) => connectionCard(c, view.csrfToken))}
        </ul>`;
  return layout(
    'Connected partners',
    html`<h1>Connected partners</h1>
      ${view.notice ? html`<p class="notice" role="status">${view.notice}</p>` : null}
      <p class="lead">
        These partners can read parts of your crew record. Disconnect one and it loses access at once.
      </p>
      ${list} ${sponsorshipsSection(view.sponsorships)}
      <footer class="account">${signOutForm(view.csrfToken)}</footer>`,
  );
}

export function connectionsPageResult(view: ConnectionsPage): WebResult {
  switch (view.outcome) {
    case 'sign_in':
      return redirect(302, view.location);
    case 'list':
      return page(200, connectionsPage(view), view.cookies);
    default:
      return assertUnreachable(view);
  }
}

export function disconnectedResult(cookies: readonly string[]): WebResult {
  return redirect(303, CONNECTIONS_PATH, cookies);
}
