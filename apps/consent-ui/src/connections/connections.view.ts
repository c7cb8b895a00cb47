import { isScope, SCOPE_DESCRIPTIONS, type MemberSponsorship } from '@svc/contracts';
import { assertUnreachable } from '@svc/platform';
import { signOutForm } from '../login/login.view';
import { html, type SafeHtml } from '../views/html';
import { layout } from '../views/layout';
import { page, redirect, type WebResult } from '../views/web-result';
import { RECENT_DAYS, type AccessSummary, type PreviousConnection } from './access-summary';
import { CONNECTIONS_PATH, type ConnectionItem, type ConnectionsPage } from './connections.service';

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

/**
 * When the partner last read the record, and a table of its reads of the last 30 days per
 * scope: a caption, column and row headers, so a screen reader says what each number counts.
 */
function accessHistory(access: AccessSummary, partnerName: string): SafeHtml {
  const last = access.lastAccessAt
    ? html`<time datetime="${access.lastAccessAt}">${formatUtc(access.lastAccessAt)}</time>`
    : html`Never`;
  const table =
    access.recent.length === 0
      ? null
      : html`<table class="reads">
          <caption>
            Reads by ${partnerName} in the last ${RECENT_DAYS} days
          </caption>
          <thead>
            <tr>
              <th scope="col">What was read</th>
              <th scope="col" class="count">Reads</th>
            </tr>
          </thead>
          <tbody>
            ${access.recent.map(
              (r) =>
                html`<tr>
                  <th scope="row">${r.scope}</th>
                  <td class="count">${r.count.toLocaleString('en-GB')}</td>
                </tr>`,
            )}
          </tbody>
        </table>`;
  return html`<p class="last-access">Last access: ${last}</p>
    ${table}`;
}

function previousCard(p: PreviousConnection): SafeHtml {
  return html`<li class="connection">
    <h3>${p.clientName} <span class="muted">(disconnected)</span></h3>
    ${
      p.disconnectedAt
        ? html`<p class="muted">
            Disconnected <time datetime="${p.disconnectedAt}">${formatUtc(p.disconnectedAt)}</time>
          </p>`
        : null
    }
    ${accessHistory(p.access, p.clientName)}
  </li>`;
}

/** Disconnected partners stay listed with their history until it ages out (13 months). */
function previousSection(previous: readonly PreviousConnection[]): SafeHtml | null {
  if (previous.length === 0) return null;
  return html`<section aria-labelledby="previous-heading" class="previous">
    <h2 id="previous-heading">Previously connected</h2>
    <p class="lead">
      These partners can no longer read your record. What they read stays listed here for 13 months.
    </p>
    <ul class="connections">
      ${previous.map(previousCard)}
    </ul>
  </section>`;
}

function connectionCard(connection: ConnectionItem, csrfToken: string): SafeHtml {
  return html`<li class="connection">
    <h2>${connection.client_name}</h2>
    <p class="muted">
      Connected <time datetime="${connection.connected_at}">${formatUtc(connection.connected_at)}</time>
    </p>
    <p>Can see:</p>
    <ul class="scopes">
      ${connection.scopes.map((s) => html` <li>${isScope(s) ? SCOPE_DESCRIPTIONS[s] : s}</li> `)}
    </ul>
    ${accessHistory(connection.access, connection.client_name)}
    <form method="post" action="${disconnectPath(connection.client_id)}" class="inline">
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

const SPONSORSHIP_STATUS: Readonly<Record<MemberSponsorship['status'], string>> = {
  active: 'Sponsoring you',
  ended: 'Ended',
  cancelled: 'Cancelled by the partner',
};

function sponsorshipRow(s: MemberSponsorship): SafeHtml {
  return html`<tr>
    <th scope="row">${s.partner_name}</th>
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
        These partners can read parts of your crew record. Disconnect one and it loses access at once. You see
        when each one last read your record, and how often.
      </p>
      ${list} ${previousSection(view.previous)} ${sponsorshipsSection(view.sponsorships)}
      <section aria-labelledby="your-data-heading" class="your-data">
        <h2 id="your-data-heading">Your data</h2>
        <p>
          A copy of your crew record, your connections and what each partner read, as a JSON file.
          <a href="${view.exportHref}" download>Download my data</a>
        </p>
      </section>
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
