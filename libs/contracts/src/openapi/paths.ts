import { API_LIMITS } from '../limits';
import {
  fieldSchema,
  MEMBER_LEFT_BODY,
  PAGE_QUERY,
  PROVISION_SEAT_BODY,
  DELIVERY_LIST_QUERY,
  REPLAY_BODY,
  SEAT_LIST_QUERY,
  type FieldSpecs,
} from '../requests';
import { DEFAULT_BODY_LIMIT_BYTES, RECONCILE_BODY_LIMIT_BYTES } from '../routes';
import { authorizationServerMetadata, SIGNING_KEY_OVERLAP_DAYS } from '../responses';
import { SCOPE_LIST_PATTERN, type Scope } from '../scopes';
import type { OpenApiDocumentOptions as DocumentContext } from './document';
import {
  headerObjects,
  htmlResponse,
  oauthErrorResponse,
  parameter,
  pathId,
  problemResponse,
  ref,
  schemaRef,
  type HeaderSet,
  type JsonObject,
  type ProblemAnswer,
} from './kit';

const SAMPLE_USER = 'usr_sandbox_alex_morgan';
const SAMPLE_TIME = '2026-03-03T09:15:00.000Z';
const SAMPLE_SEAT = {
  sponsorship_id: 'sps_7fQ2kX9mB3vN1cR8',
  email: 'invitee1@sandbox.test',
  crew_name: null,
  status: 'invited',
  external_ref: 'ext-1',
  invited_at: SAMPLE_TIME,
  activated_at: null,
  expires_at: '2027-03-03T09:15:00.000Z',
};

/** What every metered answer carries (docs/rules.md "Limits"); the required twins where the limiter has run. */
const rateLimitHeaders = (twin: '' | 'Optional'): HeaderSet => ({
  'X-RateLimit-Limit': `XRateLimitLimit${twin}`,
  'X-RateLimit-Remaining': `XRateLimitRemaining${twin}`,
  'X-RateLimit-Reset': `XRateLimitReset${twin}`,
  'RateLimit-Policy': `RateLimitPolicy${twin}`,
  RateLimit: `RateLimit${twin}`,
});
const RL = rateLimitHeaders('');
const RL_MAYBE = rateLimitHeaders('Optional');
const NO_STORE: HeaderSet = { 'Cache-Control': 'CacheControlNoStore' };
const ETAG_VALIDATORS: HeaderSet = { ETag: 'ETag', 'Last-Modified': 'LastModified' };
/** The signing keys change when one expires, which no Last-Modified would show: the ETag alone. */
const KEY_VALIDATORS: HeaderSet = { ETag: 'ETag', 'Cache-Control': 'CacheControlPrivate' };
const VALIDATORS: HeaderSet = { ...ETAG_VALIDATORS, 'Cache-Control': 'CacheControlPrivate' };
const PAGE_PARAMETERS = [ref('parameters', 'PageLimit'), ref('parameters', 'Cursor')];

function json(description: string, schema: string, example: unknown, headers: HeaderSet = RL): JsonObject {
  return {
    description,
    headers: headerObjects(headers),
    content: { 'application/json': { schema: schemaRef(schema), example: example as JsonObject } },
  };
}

/** The consent screen's decision and the token and revocation requests are forms (RFC 6749 §4.1.3, RFC 7009 §2.1). */
function formBody(schema: JsonObject): JsonObject {
  return { required: true, content: { 'application/x-www-form-urlencoded': { schema } } };
}

function empty(description: string, headers: HeaderSet = {}): JsonObject {
  return { description, headers: headerObjects(headers) };
}

/** An operation's answers by status: a response, or the Problem answer it is made of. */
type Answers = Readonly<Record<number, JsonObject | ProblemAnswer>>;

/** The gateway's 400 for a request it does not pass on to any app (see `responses`). */
const GATEWAY_400: ProblemAnswer = {
  codes: ['bad_request'],
  description:
    'The request cannot be read: the gateway does not pass it on (headers too large, URI too long, an encoded slash or dot segment in the path, repeated credentials, an unsupported transfer encoding), or a body was sent that cannot be parsed.',
};

/**
 * The responses of one operation: its answers, plus the gateway's 502 and 504 (Problem Details,
 * also in front of the OAuth endpoints) and its 400 for a request it will not pass on at all:
 * headers over its buffers, a URI too long, a path with encoded slashes or dot segments, a
 * repeated `Authorization`, an unsupported transfer encoding. Where the operation answers 400
 * itself in another shape (RFC 6749 JSON, an HTML page), the gateway's Problem is a second
 * content type of that 400.
 */
function responses(ctx: DocumentContext, answers: Answers): JsonObject {
  const all: Answers = {
    400: GATEWAY_400,
    502: {
      codes: ['bad_gateway'],
      description: 'The gateway could not reach the service behind this path. Retry with backoff.',
    },
    ...answers,
    504: {
      codes: ['gateway_timeout'],
      description: 'The service behind this path did not answer in time. Retry with backoff.',
    },
  };
  // Statuses are integer keys, so the object lists them in ascending order.
  const out: Record<string, JsonObject> = {};
  for (const [status, answer] of Object.entries(all)) {
    out[status] = 'codes' in answer ? problemResponse(answer as ProblemAnswer, ctx.docsUrl) : answer;
  }
  const content = (out[400].content ?? {}) as JsonObject;
  if (!content['application/problem+json'])
    out[400] = {
      ...out[400],
      description: `${String(out[400].description)} Or the gateway's Problem (\`bad_request\`) for a request it cannot pass on.`,
      content: { ...content, ...(problemResponse(GATEWAY_400, ctx.docsUrl).content as JsonObject) },
    };
  return out;
}

// ---- answers shared by the resource endpoints (/v1/*) ------------------------------------------

const BEARER_401: ProblemAnswer = {
  codes: ['invalid_token'],
  description:
    'Missing, malformed, unknown, expired or revoked access token (not counted against the rate limit; counted against the failed authentications of your address).',
  headers: { 'WWW-Authenticate': 'WwwAuthenticateBearer' },
  detail: 'The access token is malformed, unknown, expired or revoked; obtain a new one.',
};

const BASIC_401: ProblemAnswer = {
  codes: ['invalid_token'],
  description:
    'Missing or wrong client credentials (not counted against the rate limit; counted against the failed authentications of your address).',
  headers: { 'WWW-Authenticate': 'WwwAuthenticateBasic' },
  detail:
    'This endpoint needs HTTP Basic credentials: your client_id as the user name and your client_secret as the password.',
};

function limited(more = ''): Answers {
  return {
    429: {
      codes: ['rate_limit_exceeded'],
      description: `Rate limit reached: ${API_LIMITS.ratePerMinute} requests per rolling minute and ${API_LIMITS.ratePerDay} per rolling day per \`client_id\` (with the \`X-RateLimit-*\` headers), or too many failed authentications from your address, refused before the credentials are checked (without them). The refused request is not counted.${more}`,
      headers: { ...RL_MAYBE, 'Retry-After': 'RetryAfter' },
    },
    500: {
      codes: ['internal_error'],
      description: 'Unexpected error; quote `instance` to partner support.',
      headers: RL_MAYBE,
    },
    503: {
      codes: ['service_unavailable'],
      description:
        'A dependency failed (database, the shared rate-limit store, another service); retry with backoff. Rate limiting fails closed: when requests cannot be counted they are refused.',
      headers: RL_MAYBE,
    },
  };
}

function invalid422(fields: FieldSpecs | readonly string[]): ProblemAnswer {
  const names = (Array.isArray(fields) ? fields : Object.keys(fields)).map((name) => `\`${name}\``);
  return {
    codes: ['invalid_request'],
    description: `Validation failed; \`errors\` names each field (${names.join(', ')}).`,
    headers: RL,
  };
}

// ---- crew data ------------------------------------------------------------------------------------

const PAGE_422: Answers = { 422: invalid422(PAGE_QUERY) };

function crewRead(
  ctx: DocumentContext,
  options: {
    id: string;
    summary: string;
    description: string;
    scope: Scope;
    schema: string;
    example: unknown;
    query?: boolean;
  },
): JsonObject {
  const headers = { ...VALIDATORS, ...RL };
  return {
    get: {
      operationId: options.id,
      tags: ['Crew data'],
      summary: options.summary,
      description: `${options.description}\n\nScope: \`${options.scope}\`. Conditional requests: every answer carries \`ETag\` and \`Last-Modified\`; send them back in \`If-None-Match\` / \`If-Modified-Since\` to get 304 without a body.`,
      security: [{ oauth2: [options.scope] }],
      parameters: [
        ...(options.query ? PAGE_PARAMETERS : []),
        ref('parameters', 'IfNoneMatch'),
        ref('parameters', 'IfModifiedSince'),
        ref('parameters', 'XRequestIdIn'),
      ],
      responses: responses(ctx, {
        200: json('The record.', options.schema, options.example, headers),
        304: empty(
          'Not modified: the `If-None-Match` or `If-Modified-Since` still matches. No body; counts as one request.',
          headers,
        ),
        401: BEARER_401,
        403: {
          codes: ['insufficient_scope'],
          description: `The token lacks \`${options.scope}\`.`,
          headers: { 'WWW-Authenticate': 'WwwAuthenticateScope', ...RL },
          detail: `This endpoint needs an access token with the scope ${options.scope}.`,
        },
        404: { codes: ['not_found'], description: 'The token’s member has no crew record.', headers: RL },
        ...(options.query ? PAGE_422 : {}),
        ...limited(),
      }),
    },
  };
}

function crewPaths(ctx: DocumentContext): JsonObject {
  const profile = {
    user_id: SAMPLE_USER,
    name: 'Alex Morgan',
    role: 'Chief Officer',
    country: 'GB',
    photo_url: null,
    record_updated_at: SAMPLE_TIME,
    membership: {
      tier: 'premium',
      source: 'sponsored',
      since: '2025-03-03T09:15:00.000Z',
      expires_at: '2027-03-03T09:15:00.000Z',
      sponsored_by_you: true,
    },
  };
  const months = Array.from({ length: 12 }, (_, i) => ({
    month: `${i < 10 ? 2025 : 2026}-${String(((i + 3) % 12) + 1).padStart(2, '0')}`,
    days_at_sea: i % 3 === 0 ? 0 : 18,
    nautical_miles: i % 3 === 0 ? 0 : 2700,
  }));
  return {
    '/v1/me': crewRead(ctx, {
      id: 'getProfile',
      summary: 'The crew member’s profile and membership',
      description:
        'The authenticated crew member’s profile. `membership` is always present; `expires_at` and `sponsored_by_you` appear only when your platform sponsors the member, so the `ETag` depends on the caller. Recommended polling: at most hourly (use the `user.profile.updated` webhook).',
      scope: 'profile:read',
      schema: 'Profile',
      example: profile,
    }),
    '/v1/me/sea-time': crewRead(ctx, {
      id: 'getSeaTime',
      summary: 'Sea-time totals',
      description:
        'Crew-declared totals, the verified subset and days by role. Every field is present and non-null; `verified` is zeros when nothing is verified; `by_role` may be empty. Recommended polling: at most every 15 minutes.',
      scope: 'seatime:read',
      schema: 'SeaTime',
      example: {
        user_id: SAMPLE_USER,
        record_updated_at: SAMPLE_TIME,
        totals: { days_at_sea: 1460, nautical_miles: 212000, vessels_served: 9, years_active: 6.5 },
        verified: { days_at_sea: 1200, nautical_miles: 180000 },
        by_role: [
          { role: 'Chief Officer', days: 800 },
          { role: 'Second Officer', days: 660 },
        ],
      },
    }),
    '/v1/me/sea-time/recent': crewRead(ctx, {
      id: 'getSeaTimeRecent',
      summary: 'The rolling 12-month sea-time trend',
      description:
        'Exactly 12 items: the 12 calendar months (UTC) ending with the current month, oldest first; months without data carry zeros. Recommended polling: at most hourly.',
      scope: 'seatime:read',
      schema: 'RecentTrend',
      example: { user_id: SAMPLE_USER, record_updated_at: SAMPLE_TIME, months },
    }),
    '/v1/me/vessels': crewRead(ctx, {
      id: 'listVessels',
      summary: 'Vessel history, one page',
      description: `Vessel periods ordered by \`period_start\` descending, then \`id\` descending, keyset-paginated (default \`limit\` ${API_LIMITS.pageLimitDefault}, at most ${API_LIMITS.pageLimitMax}). A scan is stable under concurrent writes: its first page fixes \`record_updated_at\`, and every later page shows the periods as they were then, without duplicates or gaps. After a \`user.vessels.updated\` event, restart from the first page. Recommended polling: at most hourly.`,
      scope: 'vessels:read',
      schema: 'VesselPage',
      query: true,
      example: {
        user_id: SAMPLE_USER,
        record_updated_at: SAMPLE_TIME,
        vessels: [
          {
            id: 'vp_9K2mXq4TzL7bN1cV',
            imo: '9074729',
            name: 'Nordic Aurora',
            role: 'Chief Officer',
            period_start: '2025-11-02T00:00:00.000Z',
            period_end: '2026-01-30T12:00:00.000Z',
            days: 90,
            nautical_miles: 11200,
          },
        ],
        next_cursor: 'eyJ2IjoxLCJzIjoiMjAyNS0xMS0wMiJ9.c2lnbmF0dXJl',
      },
    }),
    '/v1/webhooks/test': {
      get: {
        operationId: 'sendWebhookTest',
        tags: ['Webhooks'],
        summary: 'Send a test webhook to your registered URL',
        description:
          'Enqueues a `webhook.test` delivery to your registered URL, about the subject of the calling token. Any valid access token may call it (no particular scope). A 2xx from your endpoint proves reachability, signature verification and the 5-second budget.',
        security: [{ oauth2: [] }],
        parameters: [ref('parameters', 'XRequestIdIn')],
        responses: responses(ctx, {
          200: json(
            'The `webhook.test` delivery is enqueued; it arrives signed like every event.',
            'WebhookTestResult',
            {
              event_id: 'evt_Xq7bN2cV9kL4mP1s',
              delivery_id: 'dlv_R5tY8uI1oP3aS6dF',
              target_url: 'https://partner.example/webhooks',
            },
            { ...NO_STORE, ...RL },
          ),
          401: BEARER_401,
          409: {
            codes: ['webhook_not_registered'],
            description: 'Your platform has no registered webhook URL.',
            headers: RL,
          },
          ...limited(),
        }),
      },
    },
  };
}

// ---- sponsorship ----------------------------------------------------------------------------------

interface PartnerOperation {
  readonly id: string;
  readonly summary: string;
  readonly description: string;
  readonly responses: Answers;
  /** A JSON body of at most `limit` bytes (DEFAULT_BODY_LIMIT_BYTES unless given). */
  readonly body?: { schema: string; example: unknown; limit?: number };
  /** Takes no body: one sent as anything but JSON is refused. */
  readonly noBody?: boolean;
  readonly parameters?: JsonObject[];
  /** Whom the 403 refuses, when more than the tag's partners. */
  readonly forbidden?: string;
  /** More reasons for a 429 on this operation, appended to the rate limit's. */
  readonly limitedAlso?: string;
}

/** Whom the 403 refuses; the webhook self-service is open to every partner that is not suspended. */
const FORBIDDEN = {
  Sponsorship: 'Your partner account is suspended or not in a sponsorship program.',
  'Webhook self-service': 'Your partner account is suspended.',
};

function partnerOperation(
  ctx: DocumentContext,
  tag: keyof typeof FORBIDDEN,
  op: PartnerOperation,
): JsonObject {
  const body: Answers = op.body
    ? {
        400: { codes: ['bad_request'], description: 'The body is not valid JSON.', headers: RL_MAYBE },
        413: {
          codes: ['payload_too_large'],
          description: `Body larger than ${(op.body.limit ?? DEFAULT_BODY_LIMIT_BYTES) / (1024 * 1024)} MiB.`,
        },
        415: { codes: ['unsupported_media_type'], description: 'The body is not `application/json`.' },
      }
    : {};
  const noBody: Answers = op.noBody
    ? {
        415: {
          codes: ['unsupported_media_type'],
          description: 'A body was sent with a `Content-Type` other than JSON; this operation takes no body.',
        },
      }
    : {};
  return {
    operationId: op.id,
    tags: [tag],
    summary: op.summary,
    description: op.description,
    security: [{ partnerBasic: [] }],
    parameters: [...(op.parameters ?? []), ref('parameters', 'XRequestIdIn')],
    ...(op.body
      ? {
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: schemaRef(op.body.schema),
                example: op.body.example as JsonObject,
              },
            },
          },
        }
      : {}),
    responses: responses(ctx, {
      ...body,
      ...noBody,
      ...op.responses,
      401: BASIC_401,
      403: { codes: ['insufficient_scope'], description: op.forbidden ?? FORBIDDEN[tag], headers: RL },
      ...limited(op.limitedAlso),
    }),
  };
}

function sponsorshipPaths(ctx: DocumentContext): JsonObject {
  const seatId = pathId('sponsorship_id', 'The seat id (`sps_…`).');
  const seat = (description: string, status: 'cancelled' | 'invited' = 'invited') =>
    json(description, 'Seat', { ...SAMPLE_SEAT, status });
  const op = (operation: PartnerOperation) => partnerOperation(ctx, 'Sponsorship', operation);
  const seat404: ProblemAnswer = {
    codes: ['not_found'],
    description:
      'No such seat among yours; another partner’s seat is 404 too, never 403. A seat id longer than 100 characters is refused before authentication, so without rate-limit headers.',
    headers: RL_MAYBE,
  };
  return {
    '/v1/partners/sponsorships': {
      get: op({
        id: 'listSeats',
        summary: 'List your sponsored seats',
        description: `Your seats, newest first (\`invited_at\` descending, then \`sponsorship_id\` descending), keyset-paginated: default \`limit\` ${API_LIMITS.pageLimitDefault}, at most ${API_LIMITS.pageLimitMax}.`,
        parameters: [
          parameter('status', 'query', 'Only seats with this status.', fieldSchema(SEAT_LIST_QUERY.status)),
          ...PAGE_PARAMETERS,
        ],
        responses: {
          200: json('One page of your seats.', 'SeatPage', { items: [SAMPLE_SEAT], next_cursor: null }),
          422: invalid422(SEAT_LIST_QUERY),
        },
      }),
      post: op({
        id: 'provisionSeat',
        summary: 'Provision a sponsored seat',
        description: `Creates a seat for an e-mail address (default term ${API_LIMITS.sponsorshipTermMonths} months). Idempotent per e-mail: when that e-mail already has a live seat of yours, that seat is returned with 200. If the e-mail belongs to a crew member, premium is granted in the same request and the seat is \`active\`; otherwise it is \`invited\` until a crew member with that e-mail exists or signs up. If granting premium fails, the answer is 502 \`entitlement_write_failed\` and the seat is released before the answer: nothing is billed and the request can be retried. \`crew_name\` stays null until the member connects your platform (OAuth consent). Seats are not a way to look people up: when you close ${API_LIMITS.probeBudgetPerDay} or more seats of crew members within 24 hours of provisioning them (by DELETE, reconcile, member-left or a term under a day), within any rolling 24 hours, new provisions are refused with 429 until the oldest of those closes leaves the window.`,
        limitedAlso: ` Provisioning also answers 429, for every new seat whatever its e-mail, once you have closed ${API_LIMITS.probeBudgetPerDay} seats of crew members within 24 hours of provisioning them in the last rolling 24 hours; \`Retry-After\` says when the oldest of those leaves the window. Seats you keep, and seats of addresses that belong to no crew member, never count.`,
        body: {
          schema: 'ProvisionSeatRequest',
          example: {
            email: 'invitee1@sandbox.test',
            external_ref: 'ext-1',
            expires_at: '2027-03-03T09:15:00Z',
          },
        },
        responses: {
          201: seat('The seat was created.'),
          200: seat('This e-mail already has a live seat of yours: that seat, unchanged.'),
          409: {
            codes: ['conflict', 'seat_quota_exceeded'],
            description:
              '`conflict`: the `external_ref` belongs to another live seat of yours with another e-mail. `seat_quota_exceeded`: your live seats fill your quota.',
            headers: RL,
          },
          502: {
            codes: ['entitlement_write_failed', 'bad_gateway'],
            description:
              '`entitlement_write_failed`: premium could not be granted; the seat was released, nothing is billed, retry safely. `bad_gateway`: the gateway could not reach the service.',
            headers: RL_MAYBE,
          },
          422: invalid422(PROVISION_SEAT_BODY),
        },
      }),
    },
    '/v1/partners/sponsorships/{sponsorship_id}': {
      get: op({
        id: 'getSeat',
        summary: 'One of your seats',
        description: 'A seat of another partner is answered with 404 `not_found`, never 403.',
        parameters: [seatId],
        responses: { 200: seat('The seat.'), 404: seat404 },
      }),
      delete: op({
        id: 'removeSeat',
        noBody: true,
        summary: 'Remove (cancel) one of your seats',
        description:
          'Cancels a live seat (dropping the sponsored premium with it) and answers with the seat, now `cancelled`. Idempotent: a seat that is already closed (`cancelled` or `ended`, both final) is answered as it is. Another partner’s seat is 404.',
        parameters: [seatId],
        responses: {
          200: seat('The seat, now `cancelled` (or as it was, when already closed).', 'cancelled'),
          404: seat404,
        },
      }),
    },
    '/v1/partners/sponsorships/reconcile': {
      post: op({
        id: 'reconcileSeats',
        summary: 'Reconcile your seats against your active members',
        description: `Compares your live seats (\`invited\` and \`active\`) with your own list of active members. A seat whose \`email\` (case-insensitive, trimmed) and \`external_ref\` (exact) are both absent from \`active_refs\` is in the diff (\`to_cancel\`). With \`apply: false\` (the default) nothing changes: always run a dry run first. With \`apply: true\` the diff is cancelled, unless it exceeds the guard's ceiling, \`max_cancel\` when given, else \`max(1, ceil(0.10 × active_seats))\`: then the answer is still 200 with \`applied: false\`, \`threshold_exceeded: true\`, \`cancelled_count: 0\` and the full diff, and only \`override_threshold: true\` applies it. \`active_refs\` holds 1 to ${API_LIMITS.reconcileMaxRefs} entries of at most ${API_LIMITS.refMaxLength} characters; the body may be up to 5 MiB.`,
        body: {
          schema: 'ReconcileRequest',
          example: { active_refs: ['ext-1', 'invitee2@sandbox.test'], apply: false },
          limit: RECONCILE_BODY_LIMIT_BYTES,
        },
        responses: {
          200: json('The diff, and what was applied.', 'ReconcileResult', {
            active_seats: 6,
            applied: false,
            cancelled_count: 0,
            missing_refs: [],
            threshold_exceeded: false,
            to_cancel: [{ email: 'invitee3@sandbox.test', sponsorship_id: 'sps_3hJ6kL9zX2cV5bN8' }],
          }),
          400: {
            codes: ['bad_request'],
            description: '`active_refs` is empty, or the body is not valid JSON.',
            headers: RL_MAYBE,
            detail: 'active_refs must list at least one active member.',
          },
          422: invalid422(['active_refs', 'apply', 'max_cancel', 'override_threshold']),
        },
      }),
    },
    '/v1/partners/members/left': {
      post: op({
        id: 'reportMemberLeft',
        summary: 'Report a member who left your platform',
        description:
          'Closes the billed seat of a member who is no longer in your system (status `ended`). `user_id` wins over `external_ref`. Idempotent: repeating it, or a member without an open seat, answers 200 with `ended: false`; an unknown `user_id` answers 200 with `ended: false, downgraded: false`. Closing the seat and dropping sponsored premium happen together or not at all: if the membership write fails, 503 and nothing changed (retry with backoff). Only the partner allowed to report members who left may call it.',
        forbidden:
          'Your partner account is suspended, not in a sponsorship program, or not the partner allowed to report members who left.',
        body: {
          schema: 'MemberLeftRequest',
          example: { user_id: SAMPLE_USER, reason: 'membership_lapsed' },
        },
        responses: {
          200: json('The outcome (also when the seat was already closed).', 'MemberLeftResult', {
            user_id: SAMPLE_USER,
            ended: true,
            downgraded: true,
          }),
          400: {
            codes: ['bad_request'],
            description: 'Neither `user_id` nor a resolvable `external_ref`, or the body is not valid JSON.',
            headers: RL_MAYBE,
            detail: 'Send the member’s user_id, or the external_ref of one of your seats.',
          },
          422: invalid422(MEMBER_LEFT_BODY),
        },
      }),
    },
  };
}

// ---- webhook self-service -------------------------------------------------------------------------

const SAMPLE_DELIVERY = {
  delivery_id: 'dlv_Hq3vT8mW1xZ5nB7kQ2rY9a',
  event_id: 'evt_4kP9sL2xV7bN3mQ8wR1tYc',
  event_type: 'user.profile.updated',
  user_id: SAMPLE_USER,
  status: 'given_up',
  attempt_count: 6,
  created_at: SAMPLE_TIME,
  last_attempt_at: '2026-03-03T17:51:00.000Z',
  next_attempt_at: null,
  last_response_status: 503,
};

const SAMPLE_ENDPOINT = {
  url: 'https://partner.example/webhooks',
  status: 'enabled',
  disabled_at: null,
  disabled_reason: null,
  last_success_at: '2026-03-03T09:15:01.000Z',
  last_failure_at: '2026-03-02T22:40:00.000Z',
  attempts_24h: 1250,
  success_rate_24h: 0.998,
};

const DELIVERY_FILTERS: Readonly<Record<'status' | 'event_type' | 'since' | 'until', string>> = {
  status: 'Only deliveries with this status.',
  event_type: 'Only events of this type.',
  since: 'Created at or after (ISO 8601).',
  until: 'Created before (ISO 8601).',
};

const NOT_REGISTERED: ProblemAnswer = {
  codes: ['webhook_not_registered'],
  description: 'No webhook URL is registered for your account.',
  headers: RL,
};

function webhookSelfServicePaths(ctx: DocumentContext): JsonObject {
  const deliveryId = pathId('delivery_id', 'The delivery id (`dlv_…`).');
  const op = (operation: PartnerOperation) => partnerOperation(ctx, 'Webhook self-service', operation);
  const conflict = (description: string): ProblemAnswer => ({
    codes: ['conflict'],
    description,
    headers: RL,
  });
  const delivery404: ProblemAnswer = {
    codes: ['not_found'],
    description:
      'No such delivery among yours; another partner’s delivery is 404 too, never 403. An id that cannot be a delivery (`dlv_…`) is 404 as well.',
    headers: RL_MAYBE,
  };
  return {
    '/v1/partners/webhooks/endpoint': {
      get: op({
        id: 'getWebhookEndpoint',
        summary: 'Your webhook endpoint and its health',
        description: `Your registered URL, whether it is enabled, and how it answered: the latest success and failure, and the attempts of the last 24 hours with their 2xx share. An endpoint whose every attempt has failed for ${API_LIMITS.webhookDisableAfterDays} days is disabled: new events are then recorded as \`skipped\` deliveries (never attempted) until you enable it again.`,
        responses: { 200: json('Your endpoint.', 'WebhookEndpoint', SAMPLE_ENDPOINT), 409: NOT_REGISTERED },
      }),
    },
    '/v1/partners/webhooks/endpoint/enable': {
      post: op({
        id: 'enableWebhookEndpoint',
        noBody: true,
        summary: 'Test your endpoint and enable it',
        description: `Sends a \`webhook.test\` event (signed like any delivery; its \`user_id\` is \`usr_endpoint_check\`, a member that does not exist) to your registered URL now, within ${API_LIMITS.webhookBudgetSeconds} seconds, and enables the endpoint only when it is acknowledged with a 2xx. The answer is 200 either way: \`endpoint.status\` says whether it is enabled, \`test\` what the attempt got. The test is in your delivery log. Takes no body. Deliveries \`skipped\` while it was disabled are not sent by this: replay them.`,
        limitedAlso: ` Enabling also answers 429 once you have made ${API_LIMITS.webhookEndpointChecksPerHour} endpoint tests in the last rolling hour (enabling here or in the portal, and the portal's test events, together); \`Retry-After\` says when the oldest leaves it.`,
        responses: {
          200: json('The endpoint after the test, and what the test got.', 'EndpointEnableResult', {
            endpoint: SAMPLE_ENDPOINT,
            test: {
              event_id: 'evt_9tR2wQ5yU8iO1pA4sD7fGh',
              delivery_id: 'dlv_3jK6lZ9xC2vB5nM8qW1eRt',
              response_status: 204,
              error: null,
              duration_ms: 84,
            },
          }),
          409: NOT_REGISTERED,
        },
      }),
    },
    '/v1/partners/webhooks/signing-keys': {
      get: op({
        id: 'listWebhookSigningKeys',
        summary: 'Your webhook signing keys (Ed25519 public keys)',
        description: `The public keys of the Ed25519 keys that sign your deliveries, oldest first: none until one is made (by partner support, \`partners rotate-signing-key\`, or in your portal), then one, or two for the ${SIGNING_KEY_OVERLAP_DAYS} days after a key is replaced. Each delivery's \`webhook-signature\` then carries \`v1a,<base64 Ed25519 signature of "<webhook-id>.<webhook-timestamp>.<raw body>">\` per key (Standard Webhooks); verify it with \`public_key\` without the \`whpk_\` prefix, base64-decoded (the raw 32 bytes, RFC 8032). The answer carries an \`ETag\` (\`Cache-Control: private, no-cache\`): send it back in \`If-None-Match\` to get 304 while the keys are unchanged.`,
        responses: {
          200: json(
            'The keys in use.',
            'WebhookSigningKeys',
            {
              data: [
                {
                  id: 'whk_Jq3vT8mW1xZ5nB7kLp0sRt',
                  algorithm: 'Ed25519',
                  public_key: 'whpk_Mb4mQ8pXl1o9Rz2vT6yWc0dJf5kHs3nAe7gUi4qBx8Y=',
                  created_at: SAMPLE_TIME,
                  expires_at: null,
                },
              ],
            },
            { ...KEY_VALIDATORS, ...RL },
          ),
          304: empty('Not modified: the `If-None-Match` still matches.', { ...KEY_VALIDATORS, ...RL }),
        },
      }),
    },
    '/v1/partners/portal/sessions': {
      post: op({
        id: 'createPortalSession',
        noBody: true,
        summary: 'Open your partner portal: a single-use link',
        description:
          "A link to your partner portal, for your support staff and on-call engineers: your webhook endpoint and its health, your delivery log and each delivery's attempts, redelivery, replay, enabling and testing the endpoint (each with the same rules and budgets as this API), and your seats. Visiting the link shows a page with one button, and the button's POST spends the link, so a link preview or a mail scanner that fetches it spends nothing. The link opens the portal once and within 5 minutes; the portal session it starts lasts at most an hour and shows your data alone. The portal may be framed only by pages of the origins of your registered redirect URIs. Takes no body. See the partner guide's Portal page.",
        responses: {
          201: json('The link and when it stops working.', 'PortalSession', {
            url: 'https://api.crew-records.example/portal/open?token=Jq3vT8mW1xZ5nB7kLp0sRt6uYc2eDf9gHi4aKo_wXzQ',
            expires_at: '2026-03-03T09:20:00Z',
          }),
        },
      }),
    },
    '/v1/partners/webhooks/deliveries': {
      get: op({
        id: 'listWebhookDeliveries',
        summary: 'Your webhook delivery log',
        description: `Your deliveries, newest first (\`created_at\` descending, then \`delivery_id\` descending), keyset-paginated: default \`limit\` ${API_LIMITS.pageLimitDefault}, at most ${API_LIMITS.pageLimitMax}. Filter by \`status\`, \`event_type\` and the creation window \`since\` (inclusive) to \`until\` (exclusive). Deliveries stay in the log 30 days after they finish.`,
        parameters: [
          ...(Object.keys(DELIVERY_FILTERS) as (keyof typeof DELIVERY_FILTERS)[]).map((name) =>
            parameter(name, 'query', DELIVERY_FILTERS[name], fieldSchema(DELIVERY_LIST_QUERY[name])),
          ),
          ...PAGE_PARAMETERS,
        ],
        responses: {
          200: json('One page of your deliveries.', 'PartnerDeliveryPage', {
            items: [SAMPLE_DELIVERY],
            next_cursor: null,
          }),
          422: invalid422(DELIVERY_LIST_QUERY),
        },
      }),
    },
    '/v1/partners/webhooks/deliveries/{delivery_id}': {
      get: op({
        id: 'getWebhookDelivery',
        summary: 'One of your deliveries, with every attempt',
        description: `The delivery and its attempts, oldest first: when each started, your endpoint's status (or \`error\` when no answer came), how long it took, and the first ${API_LIMITS.webhookResponseBodyBytes} bytes of your endpoint's answer. Another partner's delivery is 404.`,
        parameters: [deliveryId],
        responses: {
          200: json('The delivery.', 'PartnerDeliveryDetail', {
            ...SAMPLE_DELIVERY,
            status: 'given_up',
            attempt_count: 1,
            last_response_status: 410,
            given_up_reason: 'gone',
            redelivery_of: null,
            attempts: [
              {
                attempt: 1,
                attempted_at: SAMPLE_TIME,
                response_status: 410,
                error: null,
                duration_ms: 41,
                response_body: '{"error":"endpoint retired"}',
              },
            ],
          }),
          404: delivery404,
        },
      }),
    },
    '/v1/partners/webhooks/deliveries/{delivery_id}/redeliver': {
      post: op({
        id: 'redeliverWebhookDelivery',
        noBody: true,
        summary: 'Send one delivery again',
        description: `Queues a new attempt series for the same event: the same event \`id\` and body bytes, a new \`delivery_id\` (\`redelivery_of\` names this one), signed with your current secrets at each attempt. For a delivered, given-up or skipped delivery; one still retrying is 409. A disabled endpoint is 409: enable it first. At most ${API_LIMITS.webhookRedeliveriesPerHour} redeliveries per rolling hour (then 429 with \`Retry-After\`). Takes no body.`,
        limitedAlso: ` Redeliver also answers 429 once you have asked for ${API_LIMITS.webhookRedeliveriesPerHour} redeliveries in the last rolling hour; \`Retry-After\` says when the oldest leaves it.`,
        parameters: [deliveryId],
        responses: {
          202: json('The redelivery was queued.', 'RedeliveryResult', {
            delivery_id: 'dlv_7yU1iO4pA8sD2fG5hJ9kLz',
            event_id: SAMPLE_DELIVERY.event_id,
            redelivery_of: SAMPLE_DELIVERY.delivery_id,
            status: 'pending',
          }),
          404: delivery404,
          409: conflict('The delivery is still being retried, or your endpoint is disabled.'),
        },
      }),
    },
    '/v1/partners/webhooks/replay': {
      post: op({
        id: 'replayWebhookDeliveries',
        summary: 'Send again every delivery of a window',
        description: `After an outage: every delivery of yours created in [\`since\`, \`until\`) with the given \`status\` (\`delivered\`, \`given_up\` or \`skipped\`: finished ones only) is sent again as a new delivery of the same event, oldest first (at most ${API_LIMITS.webhookReplayMaxDeliveries.toLocaleString('en-US')} per call). Events keep their ids: receivers that dedupe on \`id\` stay correct. At most ${API_LIMITS.webhookRedeliveryReplayMaxDays} days per call, and ${API_LIMITS.webhookReplaysPerHour} calls per rolling hour (then 429 with \`Retry-After\`). A disabled endpoint is 409: enable it first.`,
        limitedAlso: ` Replay also answers 429 once you have made ${API_LIMITS.webhookReplaysPerHour} replay calls in the last rolling hour; \`Retry-After\` says when the oldest leaves it.`,
        body: {
          schema: 'ReplayRequest',
          example: { since: '2026-03-01T00:00:00Z', until: '2026-03-03T00:00:00Z', status: 'given_up' },
        },
        responses: {
          202: json('The replay was queued.', 'ReplayResult', { replayed_count: 42 }),
          409: conflict('Your endpoint is disabled; enable it first.'),
          422: invalid422(REPLAY_BODY),
        },
      }),
    },
  };
}

// ---- OAuth ----------------------------------------------------------------------------------------

function oauthPaths(ctx: DocumentContext): JsonObject {
  const html413 = {
    ...htmlResponse('Body larger than 1 MiB: an error page, or Problem Details from the gateway.'),
    content: {
      'text/html': { schema: { type: 'string' } },
      'application/problem+json': { schema: schemaRef('ProblemPayloadTooLarge') },
    },
  };
  const query = (name: string, description: string, schema: JsonObject) =>
    parameter(name, 'query', description, schema, true);
  const authorizeParams = [
    query('response_type', 'Always `code`.', { type: 'string', enum: ['code'] }),
    query('client_id', 'Your client id.', { type: 'string', minLength: 1 }),
    query(
      'redirect_uri',
      'Must exactly equal one of your registered URIs (a trailing slash counts). HTTPS, except `http://localhost*` and `http://127.0.0.1*`.',
      { type: 'string', format: 'uri' },
    ),
    query('scope', 'Space-separated subset of your allowed scopes.', {
      type: 'string',
      pattern: SCOPE_LIST_PATTERN,
    }),
    query('state', 'Anti-CSRF value, returned unchanged in the redirect.', { type: 'string', minLength: 1 }),
    query('code_challenge', '`base64url(sha256(code_verifier))` without padding: 43 characters.', {
      type: 'string',
      pattern: '^[A-Za-z0-9_-]{43}$',
    }),
    query('code_challenge_method', 'Always `S256`; `plain` is refused.', { type: 'string', enum: ['S256'] }),
  ];

  const client = {
    client_id: { type: 'string', description: 'Your client id (omit when using HTTP Basic).' },
    client_secret: { type: 'string', description: 'Your client secret (omit when using HTTP Basic).' },
  };
  /** The abuse limits per client address on the OAuth endpoints: RFC 6749 shape, with Retry-After. */
  const tooManyFromAddress = (failed: string) =>
    oauthErrorResponse(
      `Too many requests, or too many failed ${failed}, from your address: refused before the credentials are checked. Retry after \`Retry-After\` seconds.`,
      ['temporarily_unavailable'],
      { 'Retry-After': 'RetryAfter' },
    );
  const unavailable = oauthErrorResponse('Temporarily unavailable; retry with backoff.', [
    'temporarily_unavailable',
  ]);
  const tokenErrors = (codes: string[]): Answers => ({
    400: oauthErrorResponse('The request is invalid (RFC 6749 §5.2).', codes),
    401: oauthErrorResponse('Client authentication failed (`invalid_client`).', ['invalid_client'], {
      'WWW-Authenticate': 'WwwAuthenticateOAuthClientOptional',
    }),
    413: {
      ...oauthErrorResponse('Body larger than 1 MiB.', ['invalid_request']),
      content: {
        'application/json': { schema: schemaRef('OAuthError') },
        'application/problem+json': { schema: schemaRef('ProblemPayloadTooLarge') },
      },
    },
    429: tooManyFromAddress('client authentications'),
    500: oauthErrorResponse('Unexpected error (`server_error`).', ['server_error']),
    503: unavailable,
  });
  const htmlError = htmlResponse('Unexpected error page.');
  const serverError = oauthErrorResponse('Unexpected error.', ['server_error']);
  const location = { Location: 'Location' };

  return {
    '/oauth/authorize': {
      get: {
        operationId: 'authorize',
        tags: ['OAuth'],
        summary: 'Authorization request (the crew member’s browser)',
        description:
          'Redirect the crew member’s browser here. Without a session the member is sent to the sign-in page first (302 to `/login`) and comes back to this request. The consent screen lists your platform and the requested scopes in plain words, with Allow and Deny; it is always shown (no silent re-consent) and cannot be framed. On approval the browser is redirected to `redirect_uri` with `code`, `state` and `iss` (RFC 9207); on denial with `error=access_denied`, `state` and `iss`. An unknown `client_id` or an unregistered `redirect_uri` shows an error page (400) and never redirects; every other error redirects with `error`, `error_description` and `state`.',
        security: [{ memberSession: [] }, {}],
        parameters: authorizeParams,
        responses: responses(ctx, {
          200: htmlResponse('The consent screen (the member is signed in).'),
          302: empty(
            'To the sign-in page (no session), or to your `redirect_uri` with an error (`error`, `error_description`, `state`, `iss`).',
            location,
          ),
          400: htmlResponse(
            'Unknown `client_id` or unregistered `redirect_uri`: an error page, no redirect.',
          ),
          413: html413,
          500: htmlError,
          503: htmlResponse('The service cannot answer right now; the page asks to try again.'),
        }),
      },
      post: {
        operationId: 'authorizeDecision',
        tags: ['OAuth'],
        summary: 'The crew member’s decision on the consent screen',
        description:
          'Posted by the consent screen’s form, never by partners: it records consent (Allow) and issues the code. The form is CSRF-protected and carries the validated authorization request, which is checked again.',
        security: [{ memberSession: [] }],
        requestBody: formBody({
          type: 'object',
          required: ['csrf', 'decision'],
          properties: {
            csrf: { type: 'string', description: 'The session’s CSRF token, from the form.' },
            decision: { type: 'string', enum: ['allow', 'deny'] },
          },
          additionalProperties: {
            type: 'string',
            description: 'The authorization request’s parameters, each as `param.<name>`.',
          },
        }),
        responses: responses(ctx, {
          303: empty(
            'To your `redirect_uri`: with `code`, `state` and `iss` on Allow; with `error=access_denied`, `state` and `iss` on Deny.',
            location,
          ),
          400: htmlResponse('No valid decision, or the request is no longer valid: an error page.'),
          403: htmlResponse('No session, or the CSRF token is missing or wrong: nothing was changed.'),
          413: html413,
          415: htmlResponse('The body is not a form.'),
          500: htmlError,
          503: htmlResponse('The service cannot answer right now; nothing was changed.'),
        }),
      },
    },
    '/oauth/token': {
      post: {
        operationId: 'token',
        tags: ['OAuth'],
        summary: 'Exchange a code, or refresh a token pair',
        description: `RFC 6749 §4.1.3 and §6. Client authentication: \`client_id\` and \`client_secret\` in the form body, or HTTP Basic, not both. A code is single-use and lives ${API_LIMITS.authorizationCodeSeconds} seconds; its \`redirect_uri\` and PKCE \`code_verifier\` must match. Replaying a code answers \`invalid_grant\` and revokes every token issued from it (RFC 9700). A refresh revokes the old pair and issues a new one; \`scope\` may only narrow. Of concurrent refreshes with one token exactly one wins; the others get \`invalid_grant\` and the winner's pair stays valid.`,
        security: [{}, { clientBasic: [] }],
        requestBody: formBody({
          oneOf: [
            {
              title: 'authorization_code',
              type: 'object',
              required: ['grant_type', 'code', 'redirect_uri', 'code_verifier'],
              properties: {
                grant_type: { type: 'string', const: 'authorization_code' },
                code: { type: 'string' },
                redirect_uri: { type: 'string', format: 'uri' },
                code_verifier: {
                  type: 'string',
                  pattern: `^[A-Za-z0-9._~-]{${API_LIMITS.codeVerifierMin},${API_LIMITS.codeVerifierMax}}$`,
                },
                ...client,
              },
            },
            {
              title: 'refresh_token',
              type: 'object',
              required: ['grant_type', 'refresh_token'],
              properties: {
                grant_type: { type: 'string', const: 'refresh_token' },
                refresh_token: { type: 'string' },
                scope: {
                  type: 'string',
                  pattern: SCOPE_LIST_PATTERN,
                  description: 'Narrower scopes; never wider.',
                },
                ...client,
              },
            },
          ],
        }),
        responses: responses(ctx, {
          200: json(
            'A new token pair.',
            'TokenResponse',
            {
              access_token: 'at_Qm9xYXJkIHRoZSBzaGlwLCBsb25nIGxpdmUgdGhlIHNlYQ',
              token_type: 'Bearer',
              expires_in: API_LIMITS.accessTokenSeconds,
              refresh_token: 'rt_U2VhIHNlcnZpY2UgcmVjb3JkcyBmb3IgY3JldyBtZW1iZXJz',
              scope: 'profile:read seatime:read',
            },
            { ...NO_STORE, Pragma: 'Pragma' },
          ),
          ...tokenErrors(['invalid_request', 'invalid_grant', 'unsupported_grant_type', 'invalid_scope']),
        }),
      },
    },
    '/oauth/revoke': {
      post: {
        operationId: 'revoke',
        tags: ['OAuth'],
        summary: 'Revoke a token pair',
        description:
          'RFC 7009. Revoking either the access or the refresh token revokes both; the next request with either fails at once, on every replica. Always 200 with an empty body, also for an unknown token or another client’s token.',
        security: [{}, { clientBasic: [] }],
        requestBody: formBody({
          type: 'object',
          required: ['token'],
          properties: {
            token: { type: 'string', description: 'An access or refresh token.' },
            token_type_hint: { type: 'string', enum: ['access_token', 'refresh_token'] },
            ...client,
          },
        }),
        responses: responses(ctx, {
          200: empty('Revoked (or unknown): no body.', NO_STORE),
          ...tokenErrors(['invalid_request']),
        }),
      },
    },
    '/oauth/userinfo': {
      get: {
        operationId: 'userinfo',
        tags: ['OAuth'],
        summary: 'Basic profile of the token’s member',
        description:
          'Any valid access token. `sub` always; `name`, `picture` and `updated_at` only with `profile:read`. Not rate-limited per partner. Errors use the RFC 6749/6750 shape.',
        security: [{ oauth2: [] }],
        responses: responses(ctx, {
          200: json(
            'The basic profile.',
            'Userinfo',
            { sub: SAMPLE_USER, name: 'Alex Morgan', picture: null, updated_at: 1772529300 },
            NO_STORE,
          ),
          401: oauthErrorResponse(
            'Missing, malformed, unknown, expired or revoked access token.',
            ['invalid_token'],
            { 'WWW-Authenticate': 'WwwAuthenticateBearer' },
          ),
          429: tooManyFromAddress('authentications'),
          500: serverError,
          503: unavailable,
        }),
      },
    },
    '/.well-known/oauth-authorization-server': {
      get: {
        operationId: 'authorizationServerMetadata',
        tags: ['OAuth'],
        summary: 'Authorization server metadata',
        description:
          'RFC 8414: endpoints, scopes, grant types, client authentication methods and PKCE methods.',
        security: [],
        responses: responses(ctx, {
          200: json(
            'The metadata.',
            'AuthorizationServerMetadata',
            authorizationServerMetadata(ctx.publicBaseUrl, ctx.docsUrl),
            {},
          ),
          405: oauthErrorResponse('Only GET and HEAD.', ['invalid_request'], { Allow: 'Allow' }),
          500: serverError,
        }),
      },
    },
  };
}

// ---- the gateway's own paths ------------------------------------------------------------------------

function gatewayPaths(ctx: DocumentContext): JsonObject {
  const getOnly = (
    [operationId, summary, description]: [string, string, string],
    responses: JsonObject,
  ): JsonObject => ({
    get: {
      operationId,
      tags: ['Service'],
      summary,
      description,
      security: [],
      responses: {
        ...responses,
        '400': problemResponse(GATEWAY_400, ctx.docsUrl),
        '405': problemResponse(
          { codes: ['method_not_allowed'], description: 'Only GET and HEAD.', headers: { Allow: 'Allow' } },
          ctx.docsUrl,
        ),
      },
    },
  });
  const description = (operationId: string, format: string, mediaType: string, schema: JsonObject) =>
    getOnly(
      [
        operationId,
        `This API description (${format.slice(0, 4)})`,
        `This description as ${format}. Served by the gateway as a static file, not rate-limited; revalidate with \`If-None-Match\`.`,
      ],
      {
        '200': {
          description: 'The OpenAPI 3.1 document.',
          headers: headerObjects(ETAG_VALIDATORS),
          content: { [mediaType]: { schema } },
        },
        '304': empty('Not modified.', ETAG_VALIDATORS),
      },
    );
  return {
    '/healthz': getOnly(
      ['health', 'Liveness of the gateway', 'Answered by the gateway itself; not rate-limited.'],
      {
        '200': json('The gateway is up.', 'Health', { status: 'ok' }, {}),
        '304': empty('Not modified: `If-None-Match: *` matches any current answer (RFC 9110 §13.1.2).'),
      },
    ),
    '/openapi.json': description('openapiJson', 'JSON', 'application/json', { type: 'object' }),
    '/openapi.yaml': description(
      'openapiYaml',
      'YAML; the same document as `/openapi.json`',
      'application/yaml',
      { type: 'string' },
    ),
  };
}

export function paths(ctx: DocumentContext): JsonObject {
  return {
    ...oauthPaths(ctx),
    ...crewPaths(ctx),
    ...sponsorshipPaths(ctx),
    ...webhookSelfServicePaths(ctx),
    ...gatewayPaths(ctx),
  };
}
