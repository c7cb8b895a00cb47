import { API_LIMITS } from '../limits';
import type { ProblemCode } from '../problems';

/**
 * What each Problem code means to a partner and what to do about it. The API reference lists
 * every code with its `type` URL, and the gateway serves one page per code at
 * `{DOCS_URL}/errors/<code>` built from this table; a code without an entry here does not compile.
 */
export interface ProblemGuide {
  /** Which answers carry it (endpoints, or the gateway). */
  readonly where: string;
  /** What happened, in the partner's terms. */
  readonly meaning: string;
  /** What the partner should do next. */
  readonly action: string;
  /** Whether repeating the same request unchanged can succeed. */
  readonly retry: 'yes' | 'after a change' | 'no';
}

export const PROBLEM_GUIDE: Readonly<Record<ProblemCode, ProblemGuide>> = {
  bad_request: {
    where:
      'Reconcile with an empty `active_refs`; member-left with neither `user_id` nor a resolvable `external_ref`; a body that is not valid JSON; a malformed request refused by the gateway.',
    meaning:
      'The request cannot be processed as sent. This is the 400 for a request that no more specific code describes; its `type` is `{DOCS_URL}/errors/bad_request`.',
    action:
      'Read `detail`, fix the request and send it again. For reconcile, send at least one active reference; for member-left, send the `user_id` (preferred) or an `external_ref` of one of your seats.',
    retry: 'after a change',
  },
  invalid_token: {
    where:
      'Every `/v1/*` endpoint. Bearer endpoints answer with `WWW-Authenticate: Bearer error="invalid_token"` (or a bare `Bearer` challenge when no credentials were sent); partner endpoints with `WWW-Authenticate: Basic realm="partners"`.',
    meaning:
      'The credentials are missing, malformed, unknown, expired or revoked. Access tokens stop working at once when the member disconnects your platform or when the token pair is revoked or refreshed.',
    action:
      'Bearer endpoints: refresh the token pair with your refresh token (`grant_type=refresh_token`); if that fails with `invalid_grant`, send the member through the authorization flow again. Partner endpoints: check the `client_id` and `client_secret` sent with HTTP Basic. A 401 is not counted against your rate limit.',
    retry: 'after a change',
  },
  insufficient_scope: {
    where:
      'Crew-data endpoints whose scope the token lacks (with `WWW-Authenticate: Bearer error="insufficient_scope", scope="<needed scope>"`); partner endpoints of a suspended partner, of a partner outside the sponsorship program, and member-left for a partner not allowed to use it.',
    meaning:
      'The credentials are valid but do not allow this endpoint: the member did not grant the scope, or the partner account may not use this part of the API.',
    action:
      'Ask the member to authorize again with the scope named in `WWW-Authenticate` (only scopes your platform was onboarded with can be requested). For partner endpoints, contact partner support. A 403 counts against your rate limit.',
    retry: 'no',
  },
  not_found: {
    where: 'A seat id that is not one of your seats (also another partner’s seat); any unknown path.',
    meaning:
      'Nothing is served here for you. Another partner’s seat is answered with 404, never 403, so seat ids reveal nothing.',
    action: 'Check the path and the id. List your seats with `GET /v1/partners/sponsorships`.',
    retry: 'no',
  },
  method_not_allowed: {
    where: 'Any path that exists, called with a method it does not serve.',
    meaning: 'The path exists but does not accept this HTTP method.',
    action: 'Use one of the methods listed in the `Allow` header.',
    retry: 'after a change',
  },
  conflict: {
    where: 'Provisioning a seat (`POST /v1/partners/sponsorships`).',
    meaning:
      'The `external_ref` is already used by another live seat (`invited` or `active`) of yours with a different e-mail address. A live `external_ref` is unique per partner.',
    action:
      'Use the seat that already carries this `external_ref`, or cancel it first (`DELETE /v1/partners/sponsorships/{sponsorship_id}`), or provision with another reference.',
    retry: 'after a change',
  },
  webhook_not_registered: {
    where: '`GET /v1/webhooks/test`.',
    meaning: 'Your platform has no webhook URL registered, so there is nothing to test.',
    action:
      'Register one HTTPS webhook URL: by e-mail in the sandbox, through your account contact in production. Then call the test endpoint again.',
    retry: 'after a change',
  },
  seat_quota_exceeded: {
    where: 'Provisioning a seat (`POST /v1/partners/sponsorships`).',
    meaning: 'Your sponsorship program’s seat quota is used up by your live seats.',
    action:
      'Free seats you no longer pay for (`DELETE /v1/partners/sponsorships/{sponsorship_id}`, or reconcile against your active members), or contact partner support to raise the quota.',
    retry: 'after a change',
  },
  payload_too_large: {
    where:
      'Any endpoint with a body: 1 MiB by default, 5 MiB on `POST /v1/partners/sponsorships/reconcile`. Enforced by the gateway and by each app.',
    meaning: 'The request body is larger than the endpoint accepts.',
    action: `Send a smaller body. For reconcile, \`active_refs\` holds at most ${API_LIMITS.reconcileMaxRefs.toLocaleString('en-US')} entries of at most ${API_LIMITS.refMaxLength} characters each.`,
    retry: 'after a change',
  },
  unsupported_media_type: {
    where: 'JSON endpoints (`/v1/partners/*`) called with another `Content-Type`.',
    meaning: 'The body is not `application/json`.',
    action: 'Send the body as JSON with `Content-Type: application/json`.',
    retry: 'after a change',
  },
  invalid_request: {
    where:
      '`GET /v1/me/vessels` (bad `limit` or `cursor`), `GET /v1/partners/sponsorships` (bad `status`, `limit` or `cursor`), and the bodies of the partner endpoints.',
    meaning:
      'The request failed validation. The `errors` array has one entry per field that failed, each with at least `field` and `message`. A cursor that was altered, belongs to another member or another listing is refused here too.',
    action:
      'Fix each field named in `errors`. For a cursor, restart the listing from the first page (omit `cursor`).',
    retry: 'after a change',
  },
  rate_limit_exceeded: {
    where:
      'Every `/v1/*` endpoint: 600 requests in any rolling 60 seconds and 10,000 in any rolling 24 hours per `client_id`, across all endpoints.',
    meaning:
      'Your platform used its request budget. The refused request is not counted. `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset` describe the window with fewer requests left.',
    action:
      'Wait the number of seconds in `Retry-After`, then retry. Use conditional requests (`If-None-Match`) and the webhooks instead of polling faster than the recommended intervals.',
    retry: 'yes',
  },
  internal_error: {
    where: 'Any endpoint.',
    meaning: 'The service failed unexpectedly. The failure is logged with the request id.',
    action:
      'Retry with exponential backoff. If it persists, contact partner support quoting `instance` (the same value as the `X-Request-Id` header).',
    retry: 'yes',
  },
  bad_gateway: {
    where: 'Any path behind the gateway.',
    meaning: 'The gateway could not reach the service behind this path (it is restarting or down).',
    action: 'Retry with exponential backoff; for writes, retrying is safe where the endpoint is idempotent.',
    retry: 'yes',
  },
  entitlement_write_failed: {
    where: 'Provisioning a seat (`POST /v1/partners/sponsorships`) for an existing crew member.',
    meaning:
      'Premium could not be granted to the member. The reserved seat was released before this answer: nothing was created and nothing is billed.',
    action: 'Retry the same request, with backoff; it is safe to repeat.',
    retry: 'yes',
  },
  service_unavailable: {
    where:
      'Any `/v1/*` endpoint when a dependency fails (the database, the shared rate-limit store, another internal service); member-left when the membership write failed (then nothing changed).',
    meaning: 'A dependency did not answer in time. Nothing was half done.',
    action: 'Retry with exponential backoff.',
    retry: 'yes',
  },
  gateway_timeout: {
    where: 'Any path behind the gateway.',
    meaning: 'The service behind this path did not answer within the gateway’s timeout.',
    action:
      'Retry with exponential backoff. A write may or may not have happened: read it back (list or get the seat) before repeating a non-idempotent call.',
    retry: 'yes',
  },
};
