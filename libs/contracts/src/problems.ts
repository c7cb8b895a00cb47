/**
 * Problem Details codes (RFC 7807) of the resource endpoints. The `type` of a problem is
 * `{DOCS_URL}/errors/<code>`; each code has one status and one title.
 */
export const PROBLEMS = {
  bad_request: { status: 400, title: 'Bad request' },
  invalid_token: { status: 401, title: 'Invalid or missing credentials' },
  insufficient_scope: { status: 403, title: 'Insufficient scope' },
  not_found: { status: 404, title: 'Not found' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  conflict: { status: 409, title: 'Conflict' },
  webhook_not_registered: { status: 409, title: 'No webhook URL registered' },
  seat_quota_exceeded: { status: 409, title: 'Seat quota exceeded' },
  payload_too_large: { status: 413, title: 'Payload too large' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  invalid_request: { status: 422, title: 'Request validation failed' },
  rate_limit_exceeded: { status: 429, title: 'Rate limit exceeded' },
  internal_error: { status: 500, title: 'Internal error' },
  bad_gateway: { status: 502, title: 'Upstream unavailable' },
  entitlement_write_failed: { status: 502, title: 'Entitlement write failed' },
  service_unavailable: { status: 503, title: 'Service unavailable' },
  gateway_timeout: { status: 504, title: 'Upstream timed out' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ProblemCode = keyof typeof PROBLEMS;

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** One entry of the `errors` array of a 422 problem. */
export interface FieldError {
  readonly field: string;
  readonly message: string;
  readonly [key: string]: unknown;
}

export interface ProblemBody {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly instance: string;
  readonly errors?: readonly FieldError[];
}

export function problemType(docsUrl: string, code: ProblemCode): string {
  return `${docsUrl.replace(/\/+$/, '')}/errors/${code}`;
}
