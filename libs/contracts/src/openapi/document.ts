import { EVENT_TYPES, type EventType } from '../messaging';
import { PROBLEMS, type ProblemCode } from '../problems';
import { DEFAULT_BODY_LIMIT_BYTES, RECONCILE_BODY_LIMIT_BYTES } from '../routes';
import { components } from './components';
import { API_LIMITS } from '../limits';
import { parameter, schemaRef, type JsonObject } from './kit';
import { paths } from './paths';
import { PROBLEM_GUIDE } from './problem-guide';

/** The version of the description (docs/rules.md, Versioning: "version 1.0.0"). */
export const API_DESCRIPTION_VERSION = '1.0.0';

const EVENTS: Readonly<Record<EventType, { fires: string; scope: string; action: string }>> = {
  'user.profile.updated': {
    fires: 'Name, role, country or photo URL change.',
    scope: '`profile:read`',
    action: '`GET /v1/me` and replace the cached profile.',
  },
  'user.sea_time.updated': {
    fires: 'Totals change: a new verified entry, an amended entry, or a recalculation.',
    scope: '`seatime:read`',
    action: '`GET /v1/me/sea-time` (and `/v1/me/sea-time/recent` if you show the trend).',
  },
  'user.vessels.updated': {
    fires: 'A vessel period is added or amended (this can shift the order of any page).',
    scope: '`vessels:read`',
    action: '`GET /v1/me/vessels`, restarting from the first page.',
  },
  'user.consent.revoked': {
    fires:
      'The member disconnects your platform in the service’s dashboard; your tokens for the member stopped working at once.',
    scope: 'none: always delivered',
    action: 'Delete the data you cached about the member within 30 days.',
  },
  'webhook.test': {
    fires: 'You call `GET /v1/webhooks/test`; `user_id` is the subject of the calling token.',
    scope: 'none: always delivered',
    action: 'Nothing; a 2xx proves reachability, signature verification and the 5-second budget.',
  },
};

const EVENT_ID = { type: 'string', pattern: '^evt_[A-Za-z0-9_-]+$' };
const SECONDS = { type: 'string', pattern: '^\\d+$' };

function webhooks(): JsonObject {
  const header = (name: string, description: string, schema: JsonObject) =>
    parameter(name, 'header', description, schema, true);
  const out: JsonObject = {};
  for (const type of EVENT_TYPES) {
    const event = EVENTS[type];
    out[type] = {
      post: {
        operationId: `webhook_${type.replace(/\./g, '_')}`,
        tags: ['Webhooks'],
        summary: `Event \`${type}\``,
        description: `**Fires when:** ${event.fires}\n\n**Delivered to:** partners with an active consent of the member and scope ${event.scope}.\n\n**Do:** ${event.action}\n\nThe body is a pointer, not data. Verify \`X-SVC-Signature\` (or the Standard Webhooks \`webhook-signature\`) over the raw body before parsing it, reject timestamps older than ${API_LIMITS.webhookReplayWindowMinutes} minutes, dedupe on \`id\`, and answer 2xx within ${API_LIMITS.webhookBudgetSeconds} seconds.`,
        security: [],
        parameters: [
          header('X-SVC-Event-Id', 'The event `id` (also in the body): dedupe on it.', EVENT_ID),
          header('X-SVC-Event-Type', 'The event `type`.', { type: 'string', const: type }),
          header('X-SVC-Delivery-Id', 'This delivery to your platform; the same on every attempt of it.', {
            type: 'string',
            pattern: '^dlv_[A-Za-z0-9_-]+$',
          }),
          header(
            'X-SVC-Timestamp',
            'The Unix second of this attempt (each attempt is signed anew).',
            SECONDS,
          ),
          header(
            'X-SVC-Signature',
            '`t=<ts>,v1=<hex HMAC-SHA256(webhook secret, "<ts>.<raw body>")>`. While a secret is rotated, one `v1=` entry per valid secret; accept the delivery when any entry matches.',
            { type: 'string', pattern: '^t=\\d+(,v1=[0-9a-f]{64})+$' },
          ),
          header('webhook-id', 'Standard Webhooks: the event `id`, as `X-SVC-Event-Id`.', EVENT_ID),
          header(
            'webhook-timestamp',
            'Standard Webhooks: the Unix second of this attempt, as `X-SVC-Timestamp`.',
            SECONDS,
          ),
          header(
            'webhook-signature',
            "Standard Webhooks: `v1,<base64 HMAC-SHA256(webhook secret, \"<webhook-id>.<webhook-timestamp>.<raw body>\")>`, space-separated, one per valid secret while a secret is rotated. The key is the secret exactly as issued (the reference libraries' `format: 'raw'`). When you have signing keys (`GET /v1/partners/webhooks/signing-keys`), then `v1a,<base64 Ed25519 signature of the same text>` per key, verified with its public key alone. Verify any one entry of this, or `X-SVC-Signature`.",
            {
              type: 'string',
              pattern: '^v1,[A-Za-z0-9+/]{43}=( v1,[A-Za-z0-9+/]{43}=)*( v1a,[A-Za-z0-9+/]{86}==)*$',
            },
          ),
        ],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                allOf: [schemaRef('WebhookEvent')],
                properties: { type: { const: type } },
              },
              example: {
                created_at: '2026-03-03T09:15:00.000Z',
                id: 'evt_Xq7bN2cV9kL4mP1s',
                type,
                user_id: 'usr_sandbox_alex_morgan',
              },
            },
          },
        },
        responses: {
          '200': {
            description: `Any 2xx within ${API_LIMITS.webhookBudgetSeconds} seconds acknowledges the delivery. Anything else, or no answer in time, is a failed attempt: retried after ${API_LIMITS.webhookRetrySchedule.join(', ')}; ${API_LIMITS.webhookAttempts} attempts in all, none later than ${API_LIMITS.webhookGiveUpHours} hours after the first.`,
          },
        },
      },
    };
  }
  return out;
}

function errorTable(docsUrl: string): string {
  const rows = (Object.keys(PROBLEMS) as ProblemCode[]).map(
    (code) =>
      `| ${PROBLEMS[code].status} | [\`${code}\`](${docsUrl}/errors/${code}) | \`${docsUrl}/errors/${code}\` | ${PROBLEM_GUIDE[code].where.replace(/\|/g, '\\|')} |`,
  );
  return ['| Status | Code | `type` | Where |', '|---|---|---|---|', ...rows].join('\n');
}

function description(ctx: OpenApiDocumentOptions): string {
  const mib = (bytes: number) => `${bytes / (1024 * 1024)} MiB`;
  return `Approved partner platforms read a crew member's sea-service record with the member's explicit consent, are told by signed webhooks when it changes, and (in a sponsorship program) manage the premium seats they pay for.

Guides: [quickstart](${ctx.docsUrl}/quickstart) (OAuth with PKCE against the sandbox), [webhooks](${ctx.docsUrl}/webhooks), [sponsorship](${ctx.docsUrl}/sponsorship), [errors](${ctx.docsUrl}/errors/).

## Environments

The sandbox and production are fully isolated and behave identically; the sandbox is seeded with test partners, crew members and seats (see the quickstart). The base URL of this environment is \`${ctx.publicBaseUrl}\`.

## Authentication

- **Crew data** (\`/v1/me*\`, \`/v1/webhooks/test\`): OAuth 2.0 authorization code flow with PKCE \`S256\` (scheme \`oauth2\`). Tokens are opaque; the access token lives ${API_LIMITS.accessTokenSeconds} seconds, the refresh token ${API_LIMITS.refreshTokenDays} days and rotates on every use; a code lives ${API_LIMITS.authorizationCodeSeconds} seconds and is single-use. Revoking either token of a pair revokes both. No API keys, no client-credentials grant.
- **Scopes**: \`/v1/me\` needs \`profile:read\`; \`/v1/me/sea-time\` and \`/recent\` need \`seatime:read\`; \`/v1/me/vessels\` needs \`vessels:read\`; \`/oauth/userinfo\` and \`/v1/webhooks/test\` need any valid access token. Requesting a scope outside your allowed set is \`invalid_scope\`.
- **Partner endpoints** (\`/v1/partners/*\`): HTTP Basic with \`client_id\` and \`client_secret\` (scheme \`partnerBasic\`); only your own seats are ever visible; a suspended partner gets 403 \`insufficient_scope\`.
- **Token and revocation endpoints**: \`client_secret_post\` (form body) or HTTP Basic (\`client_secret_basic\`); token answers carry \`Cache-Control: no-store\`.
- A missing or invalid bearer token is 401 \`invalid_token\` with \`WWW-Authenticate: Bearer error="invalid_token"\` (just \`Bearer\` when no credentials were sent). A valid token without the endpoint's scope is **403** \`insufficient_scope\` with \`WWW-Authenticate: Bearer error="insufficient_scope", scope="<needed scope>"\` (RFC 6750 §3.1). Partner endpoints challenge with \`WWW-Authenticate: Basic realm="partners"\`.
- The member's disconnect stops your tokens at once and sends \`user.consent.revoked\`; delete cached data within 30 days.

## Errors

\`/v1/*\` and the gateway answer errors as RFC 7807 Problem Details (\`Content-Type: application/problem+json\`): \`type\` is \`{DOCS_URL}/errors/<code>\` (here \`${ctx.docsUrl}/errors/<code>\`), a page saying what the code means and what to do; \`instance\` equals the \`X-Request-Id\` header; only 422 carries \`errors\`, one entry per field. The 400 that has no code of its own in the interface is \`bad_request\`. Unknown paths are 404 \`not_found\`; a wrong method is 405 \`method_not_allowed\` with \`Allow\`. Bodies over ${mib(DEFAULT_BODY_LIMIT_BYTES)} (${mib(RECONCILE_BODY_LIMIT_BYTES)} on reconcile) are 413 \`payload_too_large\`; a body that is not JSON on a JSON endpoint is 415 \`unsupported_media_type\`. The OAuth endpoints answer RFC 6749 §5.2 errors (\`error\`, \`error_description\`) instead; the gateway's own 400 (a request it does not pass on: headers or URI too large, an encoded slash, repeated credentials), 502 and 504 are Problem Details everywhere.

${errorTable(ctx.docsUrl)}

## Request ids

Every response carries \`X-Request-Id\`, errors and 304s included. Send your own (\`^[A-Za-z0-9._:-]{1,128}$\`) to correlate; anything else is replaced by a fresh \`req_…\` id.

## Rate limits

Every authenticated \`/v1/*\` endpoint is metered per \`client_id\`, shared by every endpoint and replica: no client is ever admitted more than ${API_LIMITS.ratePerMinute} requests in any rolling 60 seconds, nor ${API_LIMITS.ratePerDay.toLocaleString('en-US')} in any rolling 24 hours. Every metered answer (200, 304, 403, 404, 409, 422, 429) carries \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and \`X-RateLimit-Reset\` (Unix seconds) for the window with fewer requests remaining, and the same window again in the IETF fields of draft-ietf-httpapi-ratelimit-headers-11: \`RateLimit-Policy: "minute";q=600;w=60\` and \`RateLimit: "minute";r=<remaining>;t=<seconds to reset>\` (or \`"day"\`, with \`w=86400\`); a 429 adds \`Retry-After\` (seconds). A 401 is not counted; a 429 is not counted; a 304 counts as one request. \`/healthz\`, the OAuth endpoints and the OpenAPI documents are not metered per partner. When the shared counter is unavailable, metered requests fail closed with 503.

Recommended maximum polling: \`/v1/me\` hourly, \`/v1/me/sea-time\` every 15 minutes, \`/v1/me/sea-time/recent\` hourly, \`/v1/me/vessels\` hourly; prefer the webhooks.

## Records, timestamps, conditional requests

- Timestamps are ISO 8601 UTC with \`Z\`. Every field of the sea-time, trend and vessel records is present and non-null; only \`photo_url\` may be null.
- Every crew-data answer has a strong \`ETag\` (derived from the member, \`record_updated_at\`, your scopes, your client and the page parameters) and \`Last-Modified\` (\`record_updated_at\` to the second). \`If-None-Match\` wins over \`If-Modified-Since\` (RFC 9110 §13.2.2); a match is 304 without a body.
- Lists are keyset-paginated with opaque, signed cursors: an altered cursor is 422 with an \`errors\` entry for \`cursor\`; \`limit\` is 1-${API_LIMITS.pageLimitMax} (default ${API_LIMITS.pageLimitDefault}).
- Ids are prefixed, random and URL-safe: \`usr_\` (member), \`sps_\` (seat), \`evt_\` (event), \`dlv_\` (delivery), \`req_\` (request), \`vp_\` (vessel period).

## Webhooks

One HTTPS URL per partner, registered at onboarding with a signing secret separate from \`client_secret\`. Each event is a POST of canonical JSON (\`created_at\`, \`id\`, \`type\`, \`user_id\`; keys sorted, no whitespace), signed in \`X-SVC-Signature: t=<ts>,v1=<hex HMAC-SHA256(secret, "<ts>.<raw body>")>\` (one \`v1\` per valid secret while a secret rotates; the same layout as Stripe's), with \`X-SVC-Event-Id\`, \`X-SVC-Event-Type\`, \`X-SVC-Delivery-Id\` and \`X-SVC-Timestamp\`. Accept a ${API_LIMITS.webhookReplayWindowMinutes}-minute replay window. Delivery is at least once and unordered: dedupe on \`id\`. Any 2xx within ${API_LIMITS.webhookBudgetSeconds} seconds succeeds; otherwise retries follow after ${API_LIMITS.webhookRetrySchedule.join(', ')} (${API_LIMITS.webhookAttempts} attempts, none later than ${API_LIMITS.webhookGiveUpHours} hours after the first). In production targets must be HTTPS and resolve to public addresses. The events are in the \`webhooks\` section.

## Sponsorship

Seats are \`invited\` (no crew member linked yet), \`active\` (premium granted, billed), \`ended\` (closed by member-left or at \`expires_at\`) or \`cancelled\` (removed by you or by reconcile); \`ended\` and \`cancelled\` are final; \`invited\` and \`active\` seats are live. Provisioning is idempotent per e-mail; a live \`external_ref\` is unique per partner. Reconcile compares live seats with your list of active members and has a guard against mass cancellation: run it as a dry run first. See the [sponsorship guide](${ctx.docsUrl}/sponsorship).

## Sandbox: changing records

Crew data is written by the service's own crew apps, never by partners, through an internal records API authenticated with \`Authorization: Bearer <INTERNAL_API_TOKEN>\` (\`sandbox-internal-token\` in the sandbox). The gateway routes \`/internal/*\` only in the sandbox, so you can change a test member's record and watch the webhooks; in production it stays inside the service. Each write commits the change and its event together:

- \`PATCH /internal/v1/crew/{user_id}/profile\`: any of \`name\`, \`role\`, \`country\`, \`photo_url\` → \`user.profile.updated\`
- \`POST /internal/v1/crew/{user_id}/sea-time-entries\`: \`{date, days_at_sea, nautical_miles, role, verified}\` → \`user.sea_time.updated\`
- \`POST /internal/v1/crew/{user_id}/vessel-periods\` and \`PATCH /internal/v1/crew/{user_id}/vessel-periods/{id}\`: a vessel period → \`user.vessels.updated\` (and \`user.sea_time.updated\` when totals change)
- \`GET /internal/v1/users?email=…\`: a user by e-mail (\`user_id\`, \`email\`)

## Versioning

The version is in the path (\`/v1/\`); this description is version ${API_DESCRIPTION_VERSION}. \`/v1/*\` runs at least 12 months after a \`/v2\` launch; deprecations are announced on the documentation site and by e-mail to every active partner contact. Breaking: removing or renaming a field, endpoint, header, error code or scope; tightening a validation rule; changing a webhook payload's shape; removing or changing the meaning of an event type. Not breaking: adding an endpoint, field, header, error code, scope or event type; loosening a validation rule; adding an optional query parameter. Clients must ignore unknown fields and unknown events.

Changelog: V1 launched with OAuth PKCE, the four read endpoints, the webhook test endpoint, rate limits, conditional GETs, webhooks and Problem Details errors. A later additive release added the \`membership\` block to \`/v1/me\` (no new consent), documented \`service_unavailable\` (503), and added \`entitlement_write_failed\` (502) to the sponsorship API.`;
}

export interface OpenApiDocumentOptions {
  /** PUBLIC_BASE_URL: the server of the document and the OAuth URLs. */
  readonly publicBaseUrl: string;
  /** DOCS_URL: Problem `type` URLs and the guides. */
  readonly docsUrl: string;
}

/**
 * The OpenAPI 3.1 description of the public interface, built from the contracts (scopes, Problem
 * codes, event types, body limits) so it cannot drift from them; a test compares its paths with
 * the routes the apps serve. Plain data: the gateway writes it as JSON and YAML.
 */
export function buildOpenApiDocument(options: OpenApiDocumentOptions): JsonObject {
  const ctx: OpenApiDocumentOptions = {
    publicBaseUrl: options.publicBaseUrl.replace(/\/+$/, ''),
    docsUrl: options.docsUrl.replace(/\/+$/, ''),
  };
  const document: JsonObject = {
    openapi: '3.1.0',
    info: {
      title: 'Crew record service API',
      version: API_DESCRIPTION_VERSION,
      summary:
        'Crew members’ sea-service records for approved partners, with consent; signed webhooks; sponsored seats.',
      description: description(ctx),
      contact: { name: 'Partner support', url: `${ctx.docsUrl}/` },
      license: { name: 'Proprietary: for approved partners only', url: `${ctx.docsUrl}/` },
    },
    servers: [{ url: ctx.publicBaseUrl, description: 'This environment' }],
    tags: [
      {
        name: 'OAuth',
        description: 'Authorization code flow with PKCE, tokens, revocation, userinfo, metadata.',
      },
      { name: 'Crew data', description: 'The crew member’s record, read-only, with conditional requests.' },
      { name: 'Webhooks', description: 'Signed event deliveries and the test endpoint.' },
      {
        name: 'Webhook self-service',
        description:
          'Your own delivery log, redelivery and replay, and your endpoint’s health (every partner, HTTP Basic).',
      },
      { name: 'Sponsorship', description: 'Your sponsored premium seats (sponsorship program partners).' },
      { name: 'Service', description: 'Liveness and this description.' },
    ],
    paths: paths(ctx),
    webhooks: webhooks(),
    components: components(ctx.publicBaseUrl, ctx.docsUrl),
  };
  pruneUnusedHeaders(document);
  return document;
}

/** Header components come in required/optional twins; only the ones an answer uses are kept. */
function pruneUnusedHeaders(document: JsonObject): void {
  const used = new Set<string>();
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === 'object') {
      for (const [key, inner] of Object.entries(value)) {
        if (key === '$ref' && typeof inner === 'string') used.add(inner);
        else walk(inner);
      }
    }
  };
  walk(document.paths);
  walk(document.webhooks);
  const headers = (document.components as JsonObject).headers as JsonObject;
  for (const name of Object.keys(headers)) {
    if (!used.has(`#/components/headers/${name}`)) delete headers[name];
  }
}
