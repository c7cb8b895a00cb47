import {
  EVENT_TYPES,
  SIGNING_KEY_OVERLAP_DAYS,
  PARTNER_DELIVERY_STATUS_VALUES,
  REPLAYABLE_STATUS_VALUES,
  SEAT_STATUS_VALUES,
  type DeliveryAttemptResponse,
  type PartnerDeliveryDetailResponse,
  type PartnerDeliveryPageResponse,
  type PartnerDeliveryResponse,
  type PortalAnswer,
  type PortalEndpointOverview,
  type PortalProblem,
  type PortalSeatsResult,
  type PortalWebhookActionResult,
  type SeatResponse,
  type WebhookSigningKeyResponse,
} from '@svc/contracts';
import { assertUnreachable } from '@svc/platform';
import type { RateLimitDecision } from '@svc/security';
import { html, type Interpolation, type SafeHtml } from '../views/html';
import { layout } from '../views/layout';
import { page, type WebResult } from '../views/web-result';
import { attemptsChart } from './portal-chart.view';
import { PORTAL_PATH } from './portal-cookies';
import type { LinkOffer, PortalSession } from './portal.service';

type Section = 'overview' | 'deliveries' | 'seats';
type Query = Readonly<Record<string, string>>;

const DELIVERIES_PATH = `${PORTAL_PATH}/deliveries`;
const SEATS_PATH = `${PORTAL_PATH}/seats`;

/** "5 Mar 2026, 14:05:09 UTC": unambiguous wherever the reader is; the raw text if unparseable. */
export function when(iso: string | null): string {
  if (iso === null) return 'never';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const month = 'Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec'.split(' ')[d.getUTCMonth()];
  return `${d.getUTCDate()} ${month} ${d.getUTCFullYear()}, ${d.toISOString().slice(11, 19)} UTC`;
}

function time(iso: string | null): SafeHtml {
  return iso === null ? html`never` : html`<time datetime="${iso}">${when(iso)}</time>`;
}

export function deliveryPath(deliveryId: string): string {
  return `${DELIVERIES_PATH}/${encodeURIComponent(deliveryId)}`;
}

/** The link to a list's next page: the same filters, and the cursor the list answered. */
function nextPage(path: string, query: Query, cursor: string | null): SafeHtml | null {
  return cursor
    ? html`<p><a href="${path}?${new URLSearchParams({ ...query, cursor }).toString()}">Next page</a></p>`
    : null;
}

/** A form of one button that posts the session's CSRF token to `action`. */
function postButton(session: PortalSession, action: string, label: Interpolation, style: string): SafeHtml {
  return html`<form method="post" action="${action}" class="inline">
    <input type="hidden" name="csrf" value="${session.csrfToken}" />
    <button type="submit" class="${style}">${label}</button>
  </form>`;
}

interface PortalPage {
  readonly title: string;
  readonly section: Section;
  readonly status?: number;
  /** The page's heading, where it says more than its title. */
  readonly heading?: SafeHtml;
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * A page of the portal session: the partner's name, the three sections, and signing out; framed
 * only by its partner's origins.
 */
function portalPage(
  session: PortalSession,
  { title, section, status = 200, heading, headers }: PortalPage,
  body: SafeHtml,
): WebResult {
  const link = (to: Section, href: string, text: string) =>
    html`<li>
      <a href="${href}" ${to === section ? html`aria-current="page"` : null}>${text}</a>
    </li>`;
  const framed = layout(
    `${title} · ${session.partnerName} partner portal`,
    html`<header class="portal-header">
        <p class="muted">Partner portal of <strong class="partner">${session.partnerName}</strong></p>
        <nav aria-label="Portal">
          <ul class="portal-nav">
            ${link('overview', PORTAL_PATH, 'Endpoint')} ${link('deliveries', DELIVERIES_PATH, 'Deliveries')}
            ${link('seats', SEATS_PATH, 'Seats')}
          </ul>
        </nav>
      </header>
      <h1>${heading ?? title}</h1>
      ${body}
      <footer class="account">
        <p class="muted">This portal session ends ${time(session.expiresAt.toISOString())}.</p>
        ${postButton(session, `${PORTAL_PATH}/sign-out`, 'Sign out of the portal', 'secondary')}
      </footer>`,
    'wide',
  );
  return { kind: 'page', status, body: framed, headers, frameAncestors: session.frameOrigins };
}

/** A page without a session: what happened and what to do. */
function notice(status: number, title: string, lead: string, cookies?: readonly string[]): WebResult {
  return page(
    status,
    layout(
      title,
      html`<h1>${title}</h1>
        <p class="lead">${lead}</p>`,
    ),
    cookies,
  );
}

/** A refusal that says when to come back (429) carries it as `Retry-After` too (RFC 9110 §10.2.3). */
function retryAfter(seconds: number | undefined): Readonly<Record<string, string>> | undefined {
  return seconds === undefined ? undefined : { 'retry-after': String(seconds) };
}

function problemNotice(problem: PortalProblem): SafeHtml {
  return html`<div class="alert" role="alert">
    <p>${problem.detail}</p>
    ${
      problem.errors && problem.errors.length > 0
        ? html`<ul>
            ${problem.errors.map((e) => html`<li><code>${e.field}</code>: ${e.message}</li>`)}
          </ul>`
        : null
    }
  </div>`;
}

// ---- Pages without a session ------------------------------------------------------------

/**
 * A link's page: a button that opens it (visiting spends nothing). With another partner's portal
 * session open in this browser it asks first; its form then carries that session's CSRF token,
 * which is what lets the link end it. Framed like the link's portal.
 */
export function linkResult(offer: LinkOffer): WebResult {
  const { partner, signedInAs } = offer;
  const form = (label: string) =>
    html`<form method="post" action="${PORTAL_PATH}/open" class="inline">
      <input type="hidden" name="token" value="${offer.token}" />
      ${signedInAs ? html`<input type="hidden" name="csrf" value="${signedInAs.csrfToken}" />` : null}
      <button type="submit" class="primary">${label}</button>
    </form>`;
  const [title, body] = signedInAs
    ? [
        `Continue as ${partner.name}?`,
        html`<h1>Continue as <span class="partner">${partner.name}</span>?</h1>
          <p class="lead">
            You are signed in to the portal as <strong class="partner">${signedInAs.partnerName}</strong> in
            this browser. Continuing ends that portal session and opens the portal of
            <strong class="partner">${partner.name}</strong>.
          </p>
          <div class="actions">
            ${form(`Continue as ${partner.name}`)}
            <a href="${PORTAL_PATH}">Stay signed in as ${signedInAs.partnerName}</a>
          </div>`,
      ]
    : [
        'Open the partner portal',
        html`<h1>Open the partner portal</h1>
          <p class="lead">
            This link opens the portal of <strong class="partner">${partner.name}</strong> in this browser,
            for an hour at most. It works once.
          </p>
          <div class="actions">${form('Open the portal')}</div>`,
      ];
  return { kind: 'page', status: 200, body: layout(title, body), frameAncestors: partner.frame_origins };
}

/** The link was used already, is older than 5 minutes, or was never one: nothing is shown. */
export function expiredResult(): WebResult {
  return notice(
    410,
    'This portal link has expired',
    'A portal link works once, within 5 minutes. Open the portal again from your dashboard to get a new link.',
  );
}

export function noSessionResult(): WebResult {
  return notice(
    401,
    'Your portal session has ended',
    'Portal sessions last an hour at most. Nothing was changed. Open the portal again from your dashboard.',
  );
}

export function signedOutResult(cookies: readonly string[]): WebResult {
  return notice(
    200,
    'Signed out of the portal',
    'Open the portal again from your dashboard when you need it.',
    cookies,
  );
}

/**
 * A page or action refused because the partner has spent its requests (per minute or per day),
 * which the portal shares with the API: when to come back, and that nothing was done.
 */
export function rateLimitedResult(session: PortalSession, decision: RateLimitDecision): WebResult {
  const seconds = decision.retryAfter ?? 1;
  const back = new Date(Date.now() + seconds * 1000).toISOString();
  return portalPage(
    session,
    {
      title: 'Come back in a moment',
      section: 'overview',
      status: 429,
      heading: html`Come back in ${seconds} second${seconds === 1 ? '' : 's'}`,
      headers: retryAfter(seconds),
    },
    html`<p class="lead">
      Your partner account has used its ${decision.limit} requests per ${decision.window}. The portal counts
      against the same limits as your API calls, so nothing was shown or done. Try again at ${time(back)}.
    </p>`,
  );
}

export function csrfMismatchResult(session: PortalSession): WebResult {
  return portalPage(
    session,
    { title: 'This form has expired', section: 'overview', status: 403 },
    html`<p class="lead">
      For your protection nothing was changed: the form did not come from this portal session. Go back, reload
      the page and try again.
    </p>`,
  );
}

// ---- Endpoint ---------------------------------------------------------------------------

function endpointSection(session: PortalSession, overview: PortalEndpointOverview): SafeHtml {
  const e = overview.endpoint;
  const rateValue = typeof e.success_rate_24h === 'number' ? e.success_rate_24h : null;
  const rate = rateValue === null ? 'no attempts' : `${(rateValue * 100).toFixed(1)} %`;
  return html`<dl class="facts">
      <dt>URL</dt>
      <dd><code>${e.url}</code></dd>
      <dt>Status</dt>
      <dd>
        ${
          e.status === 'enabled'
            ? html`<span class="status status-ok">Enabled</span>`
            : html`<span class="status status-bad">Disabled</span>
                ${e.disabled_reason === 'failing' ? 'because every attempt failed' : 'by partner support'}
                since ${time(e.disabled_at)}`
        }
      </dd>
      <dt>Last success</dt>
      <dd>${time(e.last_success_at)}</dd>
      <dt>Last failure</dt>
      <dd>${time(e.last_failure_at)}</dd>
      <dt>Success rate, 24 hours</dt>
      <dd>${rate} (${e.attempts_24h} attempts)</dd>
    </dl>
    ${attemptsChart(overview.hours)}
    <h2>Check your endpoint</h2>
    <p>
      A test sends a signed <code>webhook.test</code> event (member <code>usr_endpoint_check</code>) to your
      URL now; it is in your delivery log like any delivery.
    </p>
    <div class="actions">
      ${postButton(session, `${PORTAL_PATH}/endpoint/test`, 'Send a test event', 'secondary')}
      ${e.status === 'disabled' ? postButton(session, `${PORTAL_PATH}/endpoint/enable`, 'Test and enable', 'primary') : null}
    </div>
    ${signingKeysSection(session, overview.signing_keys)}`;
}

function signingKeyList(keys: readonly WebhookSigningKeyResponse[]): SafeHtml {
  return keys.length === 0
    ? html`<p class="empty">No signing keys: your deliveries carry HMAC signatures only.</p>`
    : html`<ul class="signing-keys">
        ${keys.map(
          (k) =>
            html`<li>
              <code>${k.id}</code>, made ${time(k.created_at)},
              ${k.expires_at === null ? 'the newest' : html`signs until ${time(k.expires_at)}`}
              <pre><code>${k.public_key}</code></pre>
            </li>`,
        )}
      </ul>`;
}

function signingKeysSection(session: PortalSession, keys: readonly WebhookSigningKeyResponse[]): SafeHtml {
  return html`<h2>Signing keys (Ed25519)</h2>
    <p>
      Each delivery carries a <code>v1a</code> entry in <code>webhook-signature</code> for each key below;
      verify it with the public key (also at <code>GET /v1/partners/webhooks/signing-keys</code>). A new key
      signs beside the one it replaces for ${SIGNING_KEY_OVERLAP_DAYS} days.
    </p>
    ${signingKeyList(keys)}
    ${postButton(
      session,
      `${PORTAL_PATH}/signing-keys/rotate`,
      html` ${keys.length === 0 ? 'Create a signing key' : 'Replace the signing key'} `,
      'secondary',
    )}`;
}

export function overviewResult(
  session: PortalSession,
  answer: PortalAnswer<PortalEndpointOverview>,
): WebResult {
  const body = answer.ok
    ? endpointSection(session, answer.result)
    : answer.problem.code === 'webhook_not_registered'
      ? html`<p class="empty">
          No webhook URL is registered for your account; ask partner support to register one.
        </p>`
      : problemNotice(answer.problem);
  return portalPage(session, { title: 'Webhook endpoint', section: 'overview' }, body);
}

// ---- Deliveries -------------------------------------------------------------------------

function option(value: string, label: string, selected: string | undefined): SafeHtml {
  return html`<option value="${value}" ${value === (selected ?? '') ? html`selected` : null}>
    ${label}
  </option>`;
}

function field(id: string, label: string, control: SafeHtml, hint?: string): SafeHtml {
  return html`<div class="field">
    <label for="${id}">${label}</label>
    ${hint ? html`<p class="hint" id="${id}-hint">${hint}</p>` : null} ${control}
  </div>`;
}

/** A select of `values`, led by "Any" unless `any` is false. */
function selectField(
  id: string,
  label: string,
  name: string,
  values: readonly string[],
  selected: string | undefined,
  any = true,
): SafeHtml {
  return field(
    id,
    label,
    html`<select id="${id}" name="${name}">
      ${any ? option('', 'Any', selected) : null} ${values.map((v) => option(v, v, selected))}
    </select>`,
  );
}

function timeField(id: string, label: string, name: string, value?: string): SafeHtml {
  const input = html`<input
    type="text"
    id="${id}"
    name="${name}"
    value="${value ?? ''}"
    autocomplete="off"
    aria-describedby="${id}-hint"
  />`;
  return field(id, label, input, 'UTC, as 2026-03-01T18:00:00Z');
}

function filterForm(query: Query): SafeHtml {
  return html`<form method="get" action="${DELIVERIES_PATH}" class="filters" aria-labelledby="filter-heading">
    <h2 id="filter-heading">Filter</h2>
    ${selectField('f-status', 'Status', 'status', PARTNER_DELIVERY_STATUS_VALUES, query.status)}
    ${selectField('f-type', 'Event type', 'event_type', EVENT_TYPES, query.event_type)}
    ${timeField('f-since', 'Created from', 'since', query.since)}
    ${timeField('f-until', 'Created before', 'until', query.until)}
    ${field(
      'f-limit',
      'Per page',
      html`<input
        type="number"
        id="f-limit"
        name="limit"
        min="1"
        max="200"
        value="${query.limit ?? '50'}"
      />`,
    )}
    <button type="submit" class="secondary">Show deliveries</button>
  </form>`;
}

/** A delivery's or a seat's status: `ok` is the good one, `neutral` the one still on its way. */
function statusBadge(status: string, ok = 'delivered', neutral = 'pending'): SafeHtml {
  const tone = status === ok ? 'ok' : status === neutral ? 'neutral' : 'bad';
  return html`<span class="status status-${tone}">${status.replace('_', ' ')}</span>`;
}

/** "2026-03-05 14:05 UTC": a table cell's time, the full one in its `datetime` and the delivery's page. */
function shortTime(iso: string | null): SafeHtml {
  if (iso === null) return html`<span class="muted">none</span>`;
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return html`${iso}`;
  return html`<time datetime="${iso}">${d.toISOString().slice(0, 16).replace('T', ' ')} UTC</time>`;
}

/** The delivery log's columns: one delivery is one row, one line on a laptop. */
const DELIVERY_COLUMNS: readonly (readonly [string, (d: PartnerDeliveryResponse) => Interpolation])[] = [
  ['Status', (d) => statusBadge(d.status)],
  [
    'Event type',
    (d) => html`
      <a href="${deliveryPath(d.delivery_id)}" aria-label="${d.event_type}, delivery ${d.delivery_id}"
        ><code>${d.event_type}</code></a
      >
    `,
  ],
  ['Event id', (d) => html`<code>${d.event_id}</code>`],
  ['Created', (d) => shortTime(d.created_at)],
  ['Attempts', (d) => d.attempt_count],
  [
    'Last answer',
    (d) =>
      typeof d.last_response_status === 'number'
        ? html` HTTP ${d.last_response_status} `
        : html` <span class="muted">none</span> `,
  ],
  ['Next attempt', (d) => shortTime(d.next_attempt_at)],
];

function replayForm(session: PortalSession): SafeHtml {
  return html`<form
    method="post"
    action="${PORTAL_PATH}/replay"
    class="filters"
    aria-labelledby="replay-heading"
  >
    <h2 id="replay-heading">Replay a time range</h2>
    <p>
      Sends again every finished delivery with that status created in the range (at most 7 days), each as a
      new delivery of the same event. Deliveries still being retried are left to their own attempts.
    </p>
    <input type="hidden" name="csrf" value="${session.csrfToken}" />
    ${timeField('r-since', 'From', 'since')} ${timeField('r-until', 'Before', 'until')}
    ${selectField('r-status', 'Status', 'status', REPLAYABLE_STATUS_VALUES, 'given_up', false)}
    <button type="submit" class="primary">Replay</button>
  </form>`;
}

export function deliveriesResult(
  session: PortalSession,
  query: Query,
  answer: PortalAnswer<PartnerDeliveryPageResponse>,
): WebResult {
  let list: SafeHtml;
  if (!answer.ok) list = problemNotice(answer.problem);
  else if (answer.result.items.length === 0) list = html`<p class="empty">No deliveries match.</p>`;
  else {
    // On a phone the stylesheet stacks each row's cells, each under its column's name (`data-label`).
    list = html`<table class="delivery-log">
        <caption class="visually-hidden">
          Deliveries, newest first
        </caption>
        <thead>
          <tr>
            ${DELIVERY_COLUMNS.map(([label]) => html` <th scope="col">${label}</th> `)}
          </tr>
        </thead>
        <tbody>
          ${answer.result.items.map(
            (d) =>
              html`<tr>
                ${DELIVERY_COLUMNS.map(([label, cell]) => html` <td data-label="${label}">${cell(d)}</td> `)}
              </tr>`,
          )}
        </tbody>
      </table>
      ${nextPage(DELIVERIES_PATH, query, answer.result.next_cursor)}`;
  }
  return portalPage(
    session,
    { title: 'Deliveries', section: 'deliveries', status: answer.ok ? 200 : answer.problem.status },
    html`<p class="lead">Newest first.</p>
      ${filterForm(query)}
      <h2>Results</h2>
      ${list} ${replayForm(session)}`,
  );
}

function attemptItem(a: DeliveryAttemptResponse): SafeHtml {
  const outcome =
    typeof a.response_status === 'number'
      ? html`HTTP ${a.response_status}`
      : html`no answer: <code>${a.error ?? 'other'}</code>`;
  return html`<li class="attempt">
    <h3>Attempt ${a.attempt}</h3>
    <dl class="facts">
      <dt>Started</dt>
      <dd>${time(a.attempted_at)}</dd>
      <dt>Outcome</dt>
      <dd>${outcome}</dd>
      <dt>Duration</dt>
      <dd>${a.duration_ms} ms</dd>
    </dl>
    ${
      a.response_body
        ? html`<p>First bytes of the answer:</p>
            <pre class="answer">${a.response_body}</pre>`
        : html`<p class="muted">No answer body.</p>`
    }
  </li>`;
}

export function deliveryResult(
  session: PortalSession,
  answer: PortalAnswer<PartnerDeliveryDetailResponse>,
): WebResult {
  if (!answer.ok) {
    return portalPage(
      session,
      { title: 'Delivery not found', section: 'deliveries', status: answer.problem.status },
      html`${problemNotice(answer.problem)}
        <p><a href="${DELIVERIES_PATH}">Back to your deliveries</a></p>`,
    );
  }
  const d = answer.result;
  return portalPage(
    session,
    {
      title: `Delivery ${d.delivery_id}`,
      section: 'deliveries',
      heading: html`Delivery <code>${d.delivery_id}</code>`,
    },
    html`<dl class="facts">
        <dt>Status</dt>
        <dd>
          ${statusBadge(d.status)}${d.given_up_reason ? html` (${d.given_up_reason.replace('_', ' ')})` : null}
        </dd>
        <dt>Event</dt>
        <dd><code>${d.event_type}</code> <code>${d.event_id}</code></dd>
        <dt>Member</dt>
        <dd><code>${d.user_id}</code></dd>
        <dt>Created</dt>
        <dd>${time(d.created_at)}</dd>
        ${
          d.next_attempt_at
            ? html`<dt>Next attempt</dt>
                <dd>${time(d.next_attempt_at)}</dd>`
            : null
        }
        ${
          d.redelivery_of
            ? html`<dt>Repeats</dt>
                <dd>
                  <a href="${deliveryPath(d.redelivery_of)}"><code>${d.redelivery_of}</code></a>
                </dd>`
            : null
        }
      </dl>
      ${postButton(session, `${deliveryPath(d.delivery_id)}/redeliver`, 'Redeliver', 'primary')}
      <h2>Attempts</h2>
      ${
        d.attempts.length === 0
          ? html`<p class="empty">Not attempted yet.</p>`
          : html`<ol class="attempts">
              ${d.attempts.map(attemptItem)}
            </ol>`
      }
      <p><a href="${DELIVERIES_PATH}">Back to your deliveries</a></p>`,
  );
}

// ---- Actions ----------------------------------------------------------------------------

function actionSuccess(result: PortalWebhookActionResult): SafeHtml {
  switch (result.action) {
    case 'redeliver':
      return html`<p class="notice" role="status">
        Queued again as
        <a href="${deliveryPath(result.redelivery.delivery_id)}"
          ><code>${result.redelivery.delivery_id}</code></a
        >, the same event <code>${result.redelivery.event_id}</code>.
      </p>`;
    case 'replay':
      return html`<p class="notice" role="status">
        ${result.replay.replayed_count} deliveries queued again.
        <a href="${DELIVERIES_PATH}">See your deliveries</a>
      </p>`;
    case 'enable':
    case 'test': {
      const t = result.test.test;
      const status = typeof t.response_status === 'number' ? t.response_status : null;
      const got = status !== null ? `HTTP ${status}` : `no answer (${t.error ?? 'other'})`;
      const enabled = result.test.endpoint.status === 'enabled';
      return html`<p class="${status !== null && status < 300 ? 'notice' : 'alert'}" role="status">
        The test event got ${got} in ${t.duration_ms} ms.
        ${
          result.action === 'enable'
            ? enabled
              ? 'Your endpoint is enabled.'
              : 'Your endpoint stays disabled: it is enabled only when the test is acknowledged with a 2xx.'
            : null
        }
        <a href="${deliveryPath(t.delivery_id)}">See the test delivery</a>
      </p>`;
    }
    case 'rotate_signing_key':
      return html`<p class="notice" role="status">
          A new signing key signs your deliveries from now on. Add its public key to your verifier.
        </p>
        ${signingKeyList(result.signing_keys.data)}`;
    default:
      return assertUnreachable(result);
  }
}

const ACTION_TITLES = {
  redeliver: 'Redeliver',
  replay: 'Replay',
  enable: 'Enable the endpoint',
  test: 'Test event',
  rotate_signing_key: 'New signing key',
} as const;

export function actionResult(
  session: PortalSession,
  action: keyof typeof ACTION_TITLES,
  answer: PortalAnswer<PortalWebhookActionResult>,
): WebResult {
  // A redelivery or replay is queued (202) and belongs to the deliveries; the rest to the endpoint.
  const queued = action === 'redeliver' || action === 'replay';
  return portalPage(
    session,
    {
      title: ACTION_TITLES[action],
      section: queued ? 'deliveries' : 'overview',
      status: answer.ok ? (queued ? 202 : 200) : answer.problem.status,
      headers: retryAfter(answer.ok ? undefined : answer.problem.retry_after),
    },
    html`${answer.ok ? actionSuccess(answer.result) : problemNotice(answer.problem)}
      <p>
        <a href="${queued ? DELIVERIES_PATH : PORTAL_PATH}">Back</a>
      </p>`,
  );
}

// ---- Seats ------------------------------------------------------------------------------

function seatItem(s: SeatResponse): SafeHtml {
  return html`<li class="delivery">
    <p><strong>${s.email}</strong> ${statusBadge(s.status, 'active', 'invited')}</p>
    <p class="muted">
      <code>${s.sponsorship_id}</code> · external_ref
      ${s.external_ref === null ? html`<em>none</em>` : html`<code>${s.external_ref}</code>`}
      ${s.crew_name ? html` · ${s.crew_name}` : null}
    </p>
    <p class="muted">
      Invited ${time(s.invited_at)}${s.activated_at ? html` · active since ${time(s.activated_at)}` : null}
      ${s.expires_at ? html` · term ends ${time(s.expires_at)}` : null}
    </p>
  </li>`;
}

export function seatsResult(
  session: PortalSession,
  query: Query,
  answer: PortalAnswer<PortalSeatsResult> | 'not_in_program',
): WebResult {
  let body: SafeHtml;
  if (answer === 'not_in_program') {
    body = html`<p class="empty">Your account is not in a sponsorship program, so it has no seats.</p>`;
  } else if (!answer.ok) {
    body = problemNotice(answer.problem);
  } else {
    const r = answer.result;
    body = html`<p class="lead">
        <strong>${r.live}</strong> live seats (invited and active) of your cap of <strong>${r.cap}</strong>.
      </p>
      <dl class="facts counts">
        ${SEAT_STATUS_VALUES.map(
          (s) =>
            html`<dt>${s}</dt>
              <dd>${r.counts[s]}</dd>`,
        )}
      </dl>
      <form method="get" action="${SEATS_PATH}" class="filters">
        ${selectField('s-status', 'Status', 'status', SEAT_STATUS_VALUES, query.status)}
        <button type="submit" class="secondary">Show seats</button>
      </form>
      ${
        r.page.items.length === 0
          ? html`<p class="empty">No seats match.</p>`
          : html`<ul class="deliveries">
              ${r.page.items.map(seatItem)}
            </ul>`
      }
      ${nextPage(SEATS_PATH, query, r.page.next_cursor)}`;
  }
  const status = answer === 'not_in_program' || answer.ok ? 200 : answer.problem.status;
  return portalPage(session, { title: 'Seats', section: 'seats', status }, body);
}
