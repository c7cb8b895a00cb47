import { API_LIMITS } from '../limits';
import { EVENT_TYPES } from '../messaging';
import { PROBLEMS, type ProblemCode } from '../problems';
import {
  bodySchema,
  fieldSchema,
  MEMBER_LEFT_BODY,
  PAGE_QUERY,
  PROVISION_SEAT_BODY,
  REPLAY_BODY,
} from '../requests';
import {
  authorizationServerMetadata,
  MEMBER_LEFT_RESULT,
  MEMBERSHIP,
  PROFILE,
  RECENT_TREND,
  RECONCILE_RESULT,
  SEA_TIME,
  SEAT,
  SEAT_PAGE,
  SEAT_STATUS,
  TOKEN_RESPONSE,
  USERINFO,
  VESSEL_PAGE,
  VESSEL_PERIOD,
  WEBHOOK_TEST_RESULT,
  WEBHOOK_ENDPOINT,
  WEBHOOK_SIGNING_KEY,
  WEBHOOK_SIGNING_KEYS,
  PARTNER_DELIVERY_STATUS,
  PARTNER_DELIVERY,
  PARTNER_DELIVERY_PAGE,
  DELIVERY_ATTEMPT,
  PARTNER_DELIVERY_DETAIL,
  REDELIVERY_RESULT,
  REPLAY_RESULT,
  ENDPOINT_ENABLE_RESULT,
  PORTAL_SESSION,
} from '../responses';
import { REQUEST_ID_PATTERN } from '../request-id';
import { SCOPES, type Scope } from '../scopes';
import {
  closedObject,
  parameter,
  prefixedId,
  problemSchema,
  problemSchemaName,
  schemaRef,
  timestamp,
  type JsonObject,
} from './kit';

/** What each scope lets a partner read (docs/rules.md, Authentication). */
const SCOPE_GRANTS: Readonly<Record<Scope, string>> = {
  'profile:read': 'Name, role, country, photo URL and the membership block (`GET /v1/me`).',
  'seatime:read': 'Aggregate sea-time totals and the 12-month trend (`GET /v1/me/sea-time`, `/recent`).',
  'vessels:read': 'Vessel history (`GET /v1/me/vessels`).',
};

const OAUTH_ERROR_CODES = [
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unsupported_grant_type',
  'invalid_scope',
  'invalid_token',
  'insufficient_scope',
  'server_error',
  'temporarily_unavailable',
] as const;

/** The schema of what auth-server answers: its URLs, its lists of supported values, its flag. */
function authorizationServerMetadataSchema(): JsonObject {
  const properties: JsonObject = {};
  const answer = authorizationServerMetadata('https://issuer.invalid', 'https://issuer.invalid/docs');
  for (const [name, value] of Object.entries(answer)) {
    if (name === 'scopes_supported') properties[name] = { type: 'array', items: schemaRef('Scope') };
    else if (Array.isArray(value))
      properties[name] = { type: 'array', items: { type: 'string', enum: value } };
    else if (typeof value === 'boolean') properties[name] = { type: 'boolean' };
    else properties[name] = { type: 'string', format: 'uri' };
  }
  // The members a client may not count on.
  const optional = [
    'response_modes_supported',
    'revocation_endpoint_auth_methods_supported',
    'authorization_response_iss_parameter_supported',
    'service_documentation',
  ];
  return {
    type: 'object',
    description: 'RFC 8414 authorization server metadata.',
    required: Object.keys(properties).filter((name) => !optional.includes(name)),
    additionalProperties: true,
    properties,
  };
}

function schemas(docsUrl: string): JsonObject {
  const problems: JsonObject = {};
  for (const code of Object.keys(PROBLEMS) as ProblemCode[]) {
    problems[problemSchemaName(code)] = problemSchema(code, docsUrl);
  }
  return {
    FieldError: {
      type: 'object',
      description: 'One field that failed validation. Entries may carry further keys.',
      required: ['field', 'message'],
      additionalProperties: true,
      properties: {
        field: {
          type: 'string',
          description: 'The query parameter or body field, e.g. `limit` or `active_refs`.',
        },
        message: { type: 'string', description: 'What the field must be.' },
      },
    },
    ...problems,
    OAuthError: closedObject(
      {
        error: { type: 'string', enum: [...OAUTH_ERROR_CODES] },
        error_description: { type: 'string', pattern: '^[\\x20-\\x21\\x23-\\x5B\\x5D-\\x7E]*$' },
      },
      'RFC 6749 §5.2 error of the OAuth endpoints (never Problem Details). `error_description` is printable ASCII without `"` and `\\`.',
    ),
    Scope: { type: 'string', enum: [...SCOPES], description: 'An OAuth scope.' },
    TokenResponse: TOKEN_RESPONSE,
    Userinfo: USERINFO,
    AuthorizationServerMetadata: authorizationServerMetadataSchema(),
    Membership: MEMBERSHIP,
    Profile: PROFILE,
    SeaTime: SEA_TIME,
    RecentTrend: RECENT_TREND,
    VesselPeriod: VESSEL_PERIOD,
    VesselPage: VESSEL_PAGE,
    WebhookTestResult: WEBHOOK_TEST_RESULT,
    WebhookEndpoint: WEBHOOK_ENDPOINT,
    WebhookSigningKey: WEBHOOK_SIGNING_KEY,
    WebhookSigningKeys: WEBHOOK_SIGNING_KEYS,
    PartnerDeliveryStatus: PARTNER_DELIVERY_STATUS,
    PartnerDelivery: PARTNER_DELIVERY,
    PartnerDeliveryPage: PARTNER_DELIVERY_PAGE,
    DeliveryAttempt: DELIVERY_ATTEMPT,
    PartnerDeliveryDetail: PARTNER_DELIVERY_DETAIL,
    RedeliveryResult: REDELIVERY_RESULT,
    ReplayRequest: bodySchema(REPLAY_BODY),
    ReplayResult: REPLAY_RESULT,
    EndpointEnableResult: ENDPOINT_ENABLE_RESULT,
    PortalSession: PORTAL_SESSION,
    SeatStatus: SEAT_STATUS,
    Seat: SEAT,
    SeatPage: SEAT_PAGE,
    ProvisionSeatRequest: bodySchema(PROVISION_SEAT_BODY),
    ReconcileRequest: closedObject(
      {
        active_refs: {
          type: 'array',
          minItems: 1,
          maxItems: API_LIMITS.reconcileMaxRefs,
          description: `Your list of active members. Each entry is matched against the seat \`email\` (case-insensitively, after trimming) and the seat \`external_ref\` (exactly). An empty list is refused with 400 \`bad_request\`; more than ${API_LIMITS.reconcileMaxRefs.toLocaleString('en-US')} entries or a bad entry with 422.`,
          items: { type: 'string', minLength: 1, maxLength: API_LIMITS.refMaxLength },
        },
        apply: {
          type: 'boolean',
          default: false,
          description:
            'False (default): dry run, the diff only. True: cancel the diff, unless the guard trips.',
        },
        max_cancel: {
          type: 'integer',
          minimum: 0,
          description:
            'Hard ceiling on cancellations. Default: `max(1, ceil(0.10 × active_seats))`. A diff above the ceiling trips the guard.',
        },
        override_threshold: {
          type: 'boolean',
          default: false,
          description: 'True applies the diff even when the guard trips.',
        },
      },
      undefined,
      ['active_refs'],
    ),
    ReconcileResult: RECONCILE_RESULT,
    MemberLeftRequest: bodySchema(
      MEMBER_LEFT_BODY,
      'At least one of `user_id` and `external_ref`; `user_id` wins when both are given.',
    ),
    MemberLeftResult: MEMBER_LEFT_RESULT,
    WebhookEvent: closedObject(
      {
        created_at: timestamp('When the event happened.'),
        id: prefixedId('evt', 'The event id: the idempotency key, stable across attempts. Dedupe on it.'),
        type: { type: 'string', enum: [...EVENT_TYPES] },
        user_id: prefixedId(
          'usr',
          'The crew member concerned (for `webhook.test`, the subject of the calling token).',
        ),
      },
      'The body of every delivery: a pointer, not data. Canonical JSON: keys sorted, no whitespace, UTF-8; the same bytes on every attempt. Receivers must ignore unknown fields and return 2xx for unknown event types.',
    ),
    Health: closedObject({ status: { type: 'string', const: 'ok' } }),
  };
}

function header(
  description: string,
  schema: JsonObject,
  required: boolean,
  example?: string | number,
): JsonObject {
  return {
    description,
    required,
    schema: example === undefined ? schema : { ...schema, examples: [example] },
  };
}

/** Each header twice: `Name` (always present on that answer) and `NameOptional` (may be absent). */
function headers(): JsonObject {
  const base: Record<string, [string, JsonObject, (string | number)?]> = {
    XRequestId: [
      'The request id: a valid incoming `X-Request-Id` (`^[A-Za-z0-9._:-]{1,128}$`) is kept, anything else is replaced. Every response carries it; error bodies repeat it in `instance`.',
      { type: 'string', pattern: REQUEST_ID_PATTERN.source },
      'req_5f2c9a7e4b1d4c08a3e6f1b2c3d4e5f6',
    ],
    ETag: [
      'Strong validator derived from the caller-visible representation (member, `record_updated_at`, scopes, caller, page parameters). Send it back in `If-None-Match`.',
      { type: 'string', pattern: '^"[!#-~]+"$' },
      '"mK3b1xV0q9h3sE8yQz2T4wA6uN5pR7c"',
    ],
    LastModified: [
      '`record_updated_at` truncated to the second, as an HTTP date.',
      { type: 'string', pattern: '^[A-Z][a-z]{2}, \\d{2} [A-Z][a-z]{2} \\d{4} \\d{2}:\\d{2}:\\d{2} GMT$' },
      'Tue, 03 Mar 2026 09:15:00 GMT',
    ],
    CacheControlPrivate: [
      'The body depends on the caller; caches must revalidate.',
      { type: 'string', const: 'private, no-cache' },
    ],
    CacheControlNoStore: ['Never stored by caches.', { type: 'string', pattern: 'no-store' }, 'no-store'],
    Pragma: [
      'HTTP/1.0 twin of `Cache-Control: no-store` (RFC 6749 §5.1).',
      { type: 'string', const: 'no-cache' },
    ],
    XRateLimitLimit: [
      'Requests allowed in the window with fewer requests remaining (600 per minute or 10,000 per day).',
      { type: 'integer', minimum: 1 },
      API_LIMITS.ratePerMinute,
    ],
    XRateLimitRemaining: ['Requests left in that window.', { type: 'integer', minimum: 0 }, 599],
    XRateLimitReset: [
      'Unix time in seconds when that window frees its next slot.',
      { type: 'integer', minimum: 0 },
      1767225600,
    ],
    RateLimitPolicy: [
      'The policy of the same window as the `X-RateLimit-*` headers, as draft-ietf-httpapi-ratelimit-headers-11 §3 writes it: `"minute"` or `"day"`, `q` its quota, `w` its length in seconds.',
      { type: 'string', pattern: '^"(minute|day)";q=[0-9]+;w=[0-9]+$' },
      `"minute";q=${API_LIMITS.ratePerMinute};w=60`,
    ],
    RateLimit: [
      'The same window’s state (draft-ietf-httpapi-ratelimit-headers-11 §4): `r` requests remaining (= `X-RateLimit-Remaining`), `t` seconds until it frees its next slot (`X-RateLimit-Reset` minus now).',
      { type: 'string', pattern: '^"(minute|day)";r=[0-9]+;t=[0-9]+$' },
      '"minute";r=599;t=42',
    ],
    RetryAfter: ['Seconds to wait before retrying (429 only).', { type: 'integer', minimum: 1 }, 12],
    WwwAuthenticateBearer: [
      'RFC 6750 §3.1 challenge: `Bearer` when no bearer credentials were sent, `Bearer error="invalid_token"` when the token is malformed, unknown, expired or revoked.',
      { type: 'string', pattern: '^Bearer( error="invalid_token")?$' },
      'Bearer error="invalid_token"',
    ],
    WwwAuthenticateScope: [
      'RFC 6750 §3.1 challenge naming the scope the endpoint needs.',
      { type: 'string', pattern: '^Bearer error="insufficient_scope", scope="[a-z:]+( [a-z:]+)*"$' },
      'Bearer error="insufficient_scope", scope="vessels:read"',
    ],
    WwwAuthenticateBasic: [
      'HTTP Basic challenge of the partner endpoints.',
      { type: 'string', const: 'Basic realm="partners"' },
      'Basic realm="partners"',
    ],
    WwwAuthenticateOAuthClient: [
      'Sent with `invalid_client` when the client tried HTTP Basic authentication.',
      { type: 'string', pattern: '^Basic realm="[^"]+"$' },
      'Basic realm="oauth"',
    ],
    Allow: ['The methods this path serves.', { type: 'string' }, 'GET, HEAD'],
    Location: ['Where the browser goes next.', { type: 'string' }],
  };
  const out: JsonObject = {};
  for (const [name, [description, schema, example]] of Object.entries(base)) {
    out[name] = header(description, schema, true, example);
    out[`${name}Optional`] = header(
      `${description} (Not on every answer of this status.)`,
      schema,
      false,
      example,
    );
  }
  return out;
}

function parameters(): JsonObject {
  return {
    IfNoneMatch: parameter(
      'If-None-Match',
      'header',
      'An `ETag` from an earlier answer; still current → 304 with no body. Wins over `If-Modified-Since` (RFC 9110 §13.2.2).',
      { type: 'string' },
    ),
    IfModifiedSince: parameter(
      'If-Modified-Since',
      'header',
      'A `Last-Modified` from an earlier answer; unchanged since → 304. Ignored when `If-None-Match` is sent.',
      { type: 'string' },
    ),
    XRequestIdIn: parameter(
      'X-Request-Id',
      'header',
      'Your own correlation id; kept when it matches `^[A-Za-z0-9._:-]{1,128}$`, replaced otherwise.',
      { type: 'string' },
    ),
    PageLimit: parameter(
      'limit',
      'query',
      `Page size, an integer from 1 to ${API_LIMITS.pageLimitMax}; anything else is 422 with an \`errors\` entry for \`limit\`.`,
      fieldSchema(PAGE_QUERY.limit),
    ),
    Cursor: parameter(
      'cursor',
      'query',
      'The `next_cursor` of the previous page; omit for the first page. Opaque and tamper-evident: an altered cursor, or one of another listing, is 422 with an `errors` entry for `cursor`.',
      fieldSchema(PAGE_QUERY.cursor),
    ),
  };
}

function securitySchemes(publicBaseUrl: string): JsonObject {
  const scopes: JsonObject = {};
  for (const scope of SCOPES) scopes[scope] = SCOPE_GRANTS[scope];
  return {
    oauth2: {
      type: 'oauth2',
      description: `OAuth 2.0 authorization code flow with PKCE (RFC 7636): every authorization request carries a fresh \`code_challenge\` = base64url(sha256(\`code_verifier\`)) with \`code_challenge_method=S256\` (\`plain\` is refused); the verifier is ${API_LIMITS.codeVerifierMin}-${API_LIMITS.codeVerifierMax} characters. Codes live ${API_LIMITS.authorizationCodeSeconds} seconds and are single-use; access tokens ${API_LIMITS.accessTokenSeconds} seconds; refresh tokens ${API_LIMITS.refreshTokenDays} days, rotating on every use. Tokens are opaque: send them as \`Authorization: Bearer <token>\` (never as a query parameter).`,
      flows: {
        authorizationCode: {
          authorizationUrl: `${publicBaseUrl}/oauth/authorize`,
          tokenUrl: `${publicBaseUrl}/oauth/token`,
          refreshUrl: `${publicBaseUrl}/oauth/token`,
          scopes,
        },
      },
    },
    partnerBasic: {
      type: 'http',
      scheme: 'basic',
      description:
        'Partner endpoints (`/v1/partners/*`): HTTP Basic with your `client_id` as the user name and your `client_secret` as the password. Missing or wrong credentials: 401 with `WWW-Authenticate: Basic realm="partners"`.',
    },
    clientBasic: {
      type: 'http',
      scheme: 'basic',
      description:
        'Client authentication at `/oauth/token` and `/oauth/revoke` (`client_secret_basic`, RFC 6749 §2.3.1), as an alternative to `client_id` and `client_secret` in the form body (`client_secret_post`). Use one method per request, not both.',
    },
    memberSession: {
      type: 'apiKey',
      in: 'cookie',
      name: 'svc_session',
      description:
        'The crew member’s browser session on the service’s own sign-in page (HttpOnly, SameSite=Lax, Secure outside local development). Partners never handle it: they redirect the member’s browser to `/oauth/authorize`.',
    },
  };
}

export function components(publicBaseUrl: string, docsUrl: string): JsonObject {
  return {
    schemas: schemas(docsUrl),
    headers: headers(),
    parameters: parameters(),
    securitySchemes: securitySchemes(publicBaseUrl),
  };
}
