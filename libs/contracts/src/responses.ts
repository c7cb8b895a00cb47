import { API_LIMITS } from './limits';
import { EVENT_TYPES } from './messaging';
import { PARTNER_DELIVERY_STATUS_VALUES, SEAT_STATUS_VALUES } from './requests';
import { SCOPE_LIST_PATTERN, SCOPES } from './scopes';
import { closedObject, count, oneOf, prefixedId, schemaRefTo, timestamp, type Shape } from './openapi/kit';

/** The public answers, declared once: the description shows these schemas and the apps' types derive from them. */

export const TOKEN_RESPONSE = closedObject(
  {
    access_token: {
      type: 'string',
      minLength: 32,
      description: 'Opaque; send as `Authorization: Bearer <token>`.',
    },
    token_type: { type: 'string', const: 'Bearer' },
    expires_in: {
      type: 'integer',
      minimum: 1,
      description: `Seconds until the access token expires: ${API_LIMITS.accessTokenSeconds}.`,
      examples: [API_LIMITS.accessTokenSeconds],
    },
    refresh_token: {
      type: 'string',
      minLength: 32,
      description: `Opaque; lives ${API_LIMITS.refreshTokenDays} days and rotates on every use.`,
    },
    scope: {
      type: 'string',
      pattern: SCOPE_LIST_PATTERN,
      description: 'The granted scopes, space-separated.',
    },
  },
  'RFC 6749 §5.1 token response. Answers carry `Cache-Control: no-store` and `Pragma: no-cache`.',
);

export const USERINFO = closedObject(
  {
    sub: {
      type: 'string',
      description: 'The crew member’s user id (`usr_…`), the same as `user_id` of `/v1/me`.',
    },
    name: { type: 'string' },
    picture: { type: ['string', 'null'], description: 'A photo URL; null when none is known.' },
    updated_at: {
      type: 'integer',
      minimum: 0,
      description: 'When the sign-in identity changed, in Unix seconds.',
    },
  },
  'OIDC-style basic profile (OpenID Connect Core §5.3.2). `sub` always; `name`, `picture` and `updated_at` only when the token has `profile:read`.',
  ['sub'],
);

/** RFC 8414 §2: what `/.well-known/oauth-authorization-server` answers, and the description's example of it. */
export function authorizationServerMetadata(issuer: string, docsUrl: string) {
  const authMethods = ['client_secret_post', 'client_secret_basic'];
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth/authorize`,
    token_endpoint: `${issuer}/oauth/token`,
    revocation_endpoint: `${issuer}/oauth/revoke`,
    userinfo_endpoint: `${issuer}/oauth/userinfo`,
    scopes_supported: [...SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    token_endpoint_auth_methods_supported: authMethods,
    revocation_endpoint_auth_methods_supported: authMethods,
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
    service_documentation: docsUrl,
  };
}

export const MEMBERSHIP = closedObject(
  {
    tier: { type: 'string', enum: ['free', 'premium'] },
    source: {
      type: 'string',
      enum: ['self', 'sponsored', 'vessel'],
      description: 'How the membership is held.',
    },
    since: timestamp('Start of the membership.'),
    expires_at: timestamp('End of the sponsored term; only for the sponsor.', true),
    sponsored_by_you: {
      type: 'boolean',
      const: true,
      description: 'Only for the sponsor, and then true.',
    },
  },
  'Always present, readable with `profile:read` (no new consent). `expires_at` and `sponsored_by_you` appear only when the calling client sponsors the member; because the body depends on the caller, so does the `ETag`.',
  ['tier', 'source', 'since'],
);

export const PROFILE = closedObject(
  {
    user_id: prefixedId('usr', 'The crew member’s identifier in the service.'),
    name: { type: 'string', description: 'Display name.' },
    role: { type: 'string', description: 'Crew role.' },
    country: { type: 'string', description: 'Country.' },
    photo_url: { type: ['string', 'null'], format: 'uri', description: 'URL of the photo, or null.' },
    record_updated_at: timestamp('Most recent update of the record.'),
    membership: schemaRefTo('Membership', MEMBERSHIP),
  },
  'The authenticated crew member’s profile. Every field is present; only `photo_url` may be null.',
);

export const SEA_TIME = closedObject(
  {
    user_id: prefixedId('usr', 'The crew member.'),
    record_updated_at: timestamp('Most recent update of the record.'),
    totals: closedObject(
      {
        days_at_sea: count('Days at sea.'),
        nautical_miles: count('Nautical miles.'),
        vessels_served: count('Distinct vessels (IMO numbers) of the current vessel periods.'),
        years_active: { type: 'number', minimum: 0, description: 'Years active, fractional.' },
      },
      'Crew-declared aggregate.',
    ),
    verified: closedObject(
      { days_at_sea: count('Verified days at sea.'), nautical_miles: count('Verified nautical miles.') },
      'Independently confirmed subset of the declared totals.',
    ),
    by_role: {
      type: 'array',
      description: 'Days at sea per crew role; may be empty.',
      items: closedObject({ role: { type: 'string' }, days: count('Days at sea in this role.') }),
    },
  },
  'Sea-time totals. Every field is present and non-null; `verified` holds zeros when nothing is verified.',
);

export const RECENT_TREND = closedObject(
  {
    user_id: prefixedId('usr', 'The crew member.'),
    record_updated_at: timestamp('Most recent update of the record.'),
    months: {
      type: 'array',
      minItems: 12,
      maxItems: 12,
      items: closedObject({
        month: { type: 'string', pattern: '^\\d{4}-(0[1-9]|1[0-2])$', description: '`YYYY-MM`.' },
        days_at_sea: count('Days at sea in the month.'),
        nautical_miles: count('Nautical miles in the month.'),
      }),
    },
  },
  'Exactly 12 items: the 12 calendar months (UTC) ending with the current month, oldest first; months without data carry zeros.',
);

export const VESSEL_PERIOD = closedObject({
  id: prefixedId('vp', 'The vessel period id.'),
  imo: { type: 'string', pattern: '^\\d{7}$', description: 'IMO number (7 digits).' },
  name: { type: 'string', description: 'Vessel name.' },
  role: { type: 'string', description: 'Crew role on board.' },
  period_start: timestamp('Start of the period.'),
  period_end: timestamp('End of the period (not before the start).'),
  days: count('Days of the period.'),
  nautical_miles: count('Nautical miles of the period.'),
});

export const VESSEL_PAGE = closedObject(
  {
    user_id: prefixedId('usr', 'The crew member.'),
    record_updated_at: timestamp(
      'Most recently updated crew-list record of the member; identical on every page of one scan and part of the page-stable `ETag`.',
    ),
    vessels: {
      type: 'array',
      maxItems: API_LIMITS.pageLimitMax,
      items: schemaRefTo('VesselPeriod', VESSEL_PERIOD),
    },
    next_cursor: {
      type: ['string', 'null'],
      description: 'Opaque, signed cursor of the next page; null on the last page.',
    },
  },
  'One page of the vessel history, ordered by `period_start` descending, then `id` descending. `record_updated_at` is fixed by the first page of a scan and is the same on every page of it.',
);

export const WEBHOOK_TEST_RESULT = closedObject({
  event_id: prefixedId('evt', 'The `id` of the `webhook.test` event you will receive.'),
  delivery_id: prefixedId('dlv', 'The delivery, also sent as `X-SVC-Delivery-Id`.'),
  target_url: {
    type: 'string',
    format: 'uri',
    description: 'The registered URL the delivery was enqueued against.',
  },
});

export const SEAT_STATUS = oneOf(
  SEAT_STATUS_VALUES,
  '`invited`: provisioned, no crew member linked yet. `active`: premium granted, billed. `ended`: closed by member-left or at `expires_at`. `cancelled`: removed by you or by reconcile. Moves: invited→active, invited→cancelled, active→cancelled, active→ended; `ended` and `cancelled` are final. Live seats are `invited` and `active`.',
);

export const SEAT = closedObject(
  {
    sponsorship_id: prefixedId('sps', 'The seat id.'),
    email: {
      type: 'string',
      format: 'email',
      maxLength: API_LIMITS.emailMaxLength,
      description: 'The member’s e-mail address, normalised (trimmed, lower-case).',
    },
    crew_name: {
      type: ['string', 'null'],
      description:
        'The member’s display name, shown only while that member has connected your platform (OAuth consent); null before they connect and again after they disconnect.',
    },
    status: schemaRefTo('SeatStatus', SEAT_STATUS),
    external_ref: {
      type: ['string', 'null'],
      description: 'The reference you supplied when provisioning the seat.',
    },
    invited_at: timestamp('When the seat was created (provisioned).', true),
    activated_at: timestamp('When premium was granted; null while `invited`.', true),
    expires_at: timestamp('End of the member’s sponsored term.', true),
  },
  'A sponsored seat. Only your own seats are ever visible.',
);

/** One page of a partner's list of `item`s (the schema component `name`). */
const partnerPage = <S>(name: string, item: S, description: string) =>
  closedObject(
    {
      items: { type: 'array', maxItems: API_LIMITS.pageLimitMax, items: schemaRefTo(name, item) },
      next_cursor: {
        type: ['string', 'null'],
        description: 'Opaque cursor of the next page; null on the last page.',
      },
    },
    description,
  );

export const SEAT_PAGE = partnerPage(
  'Seat',
  SEAT,
  'Your seats, newest first: `invited_at` descending, then `sponsorship_id` descending.',
);

export const RECONCILE_RESULT = closedObject(
  {
    active_seats: count('Your live seats (`invited` and `active`) compared.'),
    applied: { type: 'boolean', description: 'Whether the diff was cancelled.' },
    cancelled_count: count('Seats cancelled by this call.'),
    missing_refs: {
      type: 'array',
      items: { type: 'string' },
      description: 'Entries of `active_refs` that match no live seat.',
    },
    threshold_exceeded: { type: 'boolean', description: 'Whether the diff exceeds the guard’s ceiling.' },
    to_cancel: {
      type: 'array',
      description: 'Live seats whose `email` and `external_ref` are both absent from `active_refs`.',
      items: closedObject({ email: { type: 'string' }, sponsorship_id: prefixedId('sps', 'The seat.') }),
    },
  },
  'The diff of your live seats against `active_refs`. When the guard trips (diff above the ceiling, `override_threshold` false), the answer is still 200, with `applied: false`, `threshold_exceeded: true`, `cancelled_count: 0` and the full diff.',
);

export const MEMBER_LEFT_RESULT = closedObject({
  user_id: { type: 'string', description: 'The member.' },
  ended: { type: 'boolean', description: 'True when an open billed seat was closed by this call.' },
  downgraded: {
    type: 'boolean',
    description: 'True when sponsored premium was dropped; false when the member was already self-paying.',
  },
});

export const WEBHOOK_ENDPOINT = closedObject(
  {
    url: { type: 'string', format: 'uri', description: 'Your registered webhook URL.' },
    status: oneOf(
      ['enabled', 'disabled'],
      '`disabled`: every attempt failed for a while (or an operator disabled it); new events are recorded as `skipped` deliveries until you enable it again.',
    ),
    disabled_at: timestamp('When the endpoint was disabled; null while enabled.', true),
    disabled_reason: {
      type: ['string', 'null'],
      enum: ['failing', 'operator', null],
      description:
        '`failing`: every attempt failed for the disable period (5 days by default). `operator`: disabled by partner support. Null while enabled.',
    },
    last_success_at: timestamp('The latest attempt your endpoint acknowledged with a 2xx.', true),
    last_failure_at: timestamp('The latest attempt that failed.', true),
    attempts_24h: count('Attempts to your endpoint in the last 24 hours.'),
    success_rate_24h: {
      type: ['number', 'null'],
      minimum: 0,
      maximum: 1,
      description: 'Share of those attempts acknowledged with a 2xx; null without attempts.',
    },
  },
  'Your webhook endpoint: whether it is attempted, and how it has answered.',
);

export const PARTNER_DELIVERY_STATUS = oneOf(
  PARTNER_DELIVERY_STATUS_VALUES,
  '`pending`: not attempted yet. `delivered`: acknowledged with a 2xx. `failed`: the latest attempt failed, another is scheduled (`next_attempt_at`). `given_up`: no attempt left, or your endpoint answered 410 Gone. `skipped`: recorded while your endpoint was disabled, never attempted; replay it.',
);

const DELIVERY_FIELDS = {
  delivery_id: prefixedId('dlv', 'The delivery, also sent as `X-SVC-Delivery-Id`.'),
  event_id: prefixedId('evt', 'The event; the same on every delivery of it (redeliveries and replays too).'),
  event_type: oneOf(EVENT_TYPES),
  user_id: { type: 'string', description: 'The crew member the event is about.' },
  status: schemaRefTo('PartnerDeliveryStatus', PARTNER_DELIVERY_STATUS),
  attempt_count: count('Attempts so far.'),
  created_at: timestamp('When the delivery was recorded.'),
  last_attempt_at: timestamp('When the latest attempt started; null before the first.', true),
  next_attempt_at: timestamp('When the next attempt is due; null when none is scheduled.', true),
  last_response_status: {
    type: ['integer', 'null'],
    description: 'HTTP status of the latest attempt; null when it got no answer or before the first.',
  },
} as const;

export const PARTNER_DELIVERY = closedObject(
  DELIVERY_FIELDS,
  'One event to your endpoint and where its attempts stand.',
);

export const PARTNER_DELIVERY_PAGE = partnerPage(
  'PartnerDelivery',
  PARTNER_DELIVERY,
  'Your deliveries, newest first: `created_at` descending, then `delivery_id` descending.',
);

export const DELIVERY_ATTEMPT_ERRORS = [
  'timeout',
  'connection_refused',
  'connection_reset',
  'dns',
  'tls',
  'blocked_address',
  'not_a_recipient',
  'other',
] as const;

/** What one attempt got: your endpoint's status, or why no answer came, and how long it took. */
const ATTEMPT_OUTCOME = {
  response_status: {
    type: ['integer', 'null'],
    description: 'Your endpoint’s HTTP status; null without an answer.',
  },
  error: {
    type: ['string', 'null'],
    enum: [...DELIVERY_ATTEMPT_ERRORS, null],
    description:
      'Why no answer came: `timeout` (5 s for the whole exchange), `connection_refused`, `connection_reset`, `dns` (the name did not resolve), `tls` (handshake or certificate), `blocked_address` (the URL resolves to a private, loopback or link-local address), `not_a_recipient` (you no longer receive this event: consent, URL or account changed), `other`. Null when your endpoint answered (see `response_status`).',
  },
  duration_ms: count('How long the attempt took.'),
} as const;

export const DELIVERY_ATTEMPT = closedObject(
  {
    attempt: { type: 'integer', minimum: 1, description: 'The attempt’s number, from 1.' },
    attempted_at: timestamp('When the attempt started.'),
    ...ATTEMPT_OUTCOME,
    response_body: {
      type: ['string', 'null'],
      description: `The first ${API_LIMITS.webhookResponseBodyBytes} bytes of your endpoint’s answer, as UTF-8 text (a cut character shows as U+FFFD); null without an answer.`,
    },
  },
  'One attempt of a delivery.',
);

export const PARTNER_DELIVERY_DETAIL = closedObject(
  {
    ...DELIVERY_FIELDS,
    given_up_reason: {
      type: ['string', 'null'],
      enum: ['attempts_exhausted', 'gone', 'not_a_recipient', null],
      description:
        'Why a `given_up` delivery ended: `attempts_exhausted` (6 attempts, or 24 hours), `gone` (your endpoint answered 410 Gone), `not_a_recipient`. Null otherwise.',
    },
    redelivery_of: {
      type: ['string', 'null'],
      description: 'The delivery this one sends again (a redelivery or replay); null for the original.',
    },
    attempts: { type: 'array', items: schemaRefTo('DeliveryAttempt', DELIVERY_ATTEMPT) },
  },
  'A delivery and every attempt of it, oldest first.',
);

export const REDELIVERY_RESULT = closedObject(
  {
    delivery_id: prefixedId('dlv', 'The new delivery; follow it with `GET …/deliveries/{delivery_id}`.'),
    event_id: prefixedId('evt', 'The same event id as the delivery it repeats.'),
    redelivery_of: prefixedId('dlv', 'The delivery it repeats.'),
    status: { type: 'string', const: 'pending' },
  },
  'A new attempt series for the same event (same id and body), signed with your current secrets.',
);

export const REPLAY_RESULT = closedObject(
  { replayed_count: count('Deliveries queued again, each as a new delivery of the same event.') },
  'The replay was queued.',
);

export const ENDPOINT_ENABLE_RESULT = closedObject(
  {
    endpoint: schemaRefTo('WebhookEndpoint', WEBHOOK_ENDPOINT),
    test: closedObject(
      {
        event_id: prefixedId('evt', 'The `webhook.test` event sent.'),
        delivery_id: prefixedId('dlv', 'Its delivery, in your delivery log.'),
        ...ATTEMPT_OUTCOME,
      },
      'The test attempt: the endpoint is enabled only when it was acknowledged with a 2xx.',
    ),
  },
  'The endpoint after the test (enabled only on a 2xx), and what the test attempt got.',
);

export const PORTAL_SESSION = closedObject(
  {
    url: {
      type: 'string',
      format: 'uri',
      description:
        "Opens your partner portal in a browser, once, within 5 minutes; the portal session it starts lasts at most an hour. Give it to the person who needs it (or load it in a frame on a page of one of your registered redirect URIs' origins); treat it like a password until it is used.",
    },
    expires_at: timestamp('When the link stops working if it has not been used.'),
  },
  'A single-use link to your partner portal: your webhook endpoint, deliveries and seats in a browser.',
);

/** How long a replaced signing key still signs beside its successor (partners fetch the new one meanwhile). */
export const SIGNING_KEY_OVERLAP_DAYS = 7;

export const WEBHOOK_SIGNING_KEY = closedObject(
  {
    id: prefixedId('whk', 'The key.'),
    algorithm: { type: 'string', const: 'Ed25519' },
    public_key: {
      type: 'string',
      pattern: '^whpk_[A-Za-z0-9+/]{43}=$',
      description:
        '`whpk_` and the base64 of the raw 32-byte Ed25519 public key (RFC 8032), as Standard Webhooks writes it. Verify `v1a` entries of `webhook-signature` with it.',
    },
    created_at: timestamp('When the key was made.'),
    expires_at: timestamp(
      `When the key stops signing: ${SIGNING_KEY_OVERLAP_DAYS} days after its successor was made; null while it is the newest.`,
      true,
    ),
  },
  'One Ed25519 key that signs your deliveries.',
);

export const WEBHOOK_SIGNING_KEYS = closedObject(
  {
    data: {
      type: 'array',
      maxItems: 2,
      items: schemaRefTo('WebhookSigningKey', WEBHOOK_SIGNING_KEY),
      description:
        'The keys that sign your deliveries now, oldest first: none, one, or two while a key is being replaced (each delivery then carries a `v1a` signature of each).',
    },
  },
  'Your webhook signing keys (public halves only).',
);

export type TokenResponse = Shape<typeof TOKEN_RESPONSE>;
export type UserinfoResponse = Shape<typeof USERINFO>;
export type MembershipResponse = Shape<typeof MEMBERSHIP>;
export type ProfileResponse = Shape<typeof PROFILE>;
export type SeaTimeResponse = Shape<typeof SEA_TIME>;
export type RecentTrendResponse = Shape<typeof RECENT_TREND>;
export type VesselPeriodResponse = Shape<typeof VESSEL_PERIOD>;
export type VesselPageResponse = Shape<typeof VESSEL_PAGE>;
export type WebhookTestResponse = Shape<typeof WEBHOOK_TEST_RESULT>;
export type SeatResponse = Shape<typeof SEAT>;
export type SeatPageResponse = Shape<typeof SEAT_PAGE>;
export type ReconcileResponse = Shape<typeof RECONCILE_RESULT>;
export type MemberLeftResponse = Shape<typeof MEMBER_LEFT_RESULT>;
export type WebhookEndpointResponse = Shape<typeof WEBHOOK_ENDPOINT>;
export type PartnerDeliveryResponse = Shape<typeof PARTNER_DELIVERY>;
export type PartnerDeliveryPageResponse = Shape<typeof PARTNER_DELIVERY_PAGE>;
export type DeliveryAttemptResponse = Shape<typeof DELIVERY_ATTEMPT>;
export type PartnerDeliveryDetailResponse = Shape<typeof PARTNER_DELIVERY_DETAIL>;
export type RedeliveryResponse = Shape<typeof REDELIVERY_RESULT>;
export type ReplayResponse = Shape<typeof REPLAY_RESULT>;
export type EndpointEnableResponse = Shape<typeof ENDPOINT_ENABLE_RESULT>;
export type PortalSessionResponse = Shape<typeof PORTAL_SESSION>;
export type WebhookSigningKeyResponse = Shape<typeof WEBHOOK_SIGNING_KEY>;
export type WebhookSigningKeysResponse = Shape<typeof WEBHOOK_SIGNING_KEYS>;
export type DeliveryAttemptError = (typeof DELIVERY_ATTEMPT_ERRORS)[number];
