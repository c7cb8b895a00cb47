import { Injectable } from '@nestjs/common';
import { ApiProblem, AppMetrics, DependencyUnavailableError } from '@svc/platform';
import type { Counter } from 'prom-client';
import { OAuthException, type OAuthErrorCode } from '../oauth/oauth.exception';

const GRANT_TYPES = ['authorization_code', 'refresh_token'] as const;
type GrantLabel = (typeof GRANT_TYPES)[number] | 'other';
const OAUTH_ERRORS: readonly OAuthErrorCode[] = [
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'invalid_scope',
  'unsupported_grant_type',
];

/**
 * `oauth_token_requests_total{grant_type, outcome}`: each answer of the token endpoint, `issued` or
 * the RFC 6749 §5.2 code it refused with. Label values come from fixed lists only: a grant type
 * the endpoint does not support is `other`, whatever the client sent.
 */
@Injectable()
export class TokenMetrics {
  private readonly requests: Counter<'grant_type' | 'outcome'>;

  constructor(metrics: AppMetrics) {
    this.requests = metrics.counter(
      'oauth_token_requests_total',
      'token endpoint answers by grant type and outcome (issued, or the RFC 6749 error code)',
      ['grant_type', 'outcome'],
    );
    AppMetrics.preset(this.requests, {
      grant_type: GRANT_TYPES,
      outcome: ['issued', 'invalid_grant', 'invalid_client'],
    });
  }

  static grantLabel(grantType: unknown): GrantLabel {
    return (GRANT_TYPES as readonly unknown[]).includes(grantType) ? (grantType as GrantLabel) : 'other';
  }

  issued(grantType: unknown): void {
    this.requests.inc({ grant_type: TokenMetrics.grantLabel(grantType), outcome: 'issued' });
  }

  refused(grantType: unknown, error: unknown): void {
    this.requests.inc({ grant_type: TokenMetrics.grantLabel(grantType), outcome: outcomeOf(error) });
  }
}

/** The RFC 6749 §5.2 code the error renderer answers with for `error` (oauth-error.renderer.ts). */
function outcomeOf(error: unknown): string {
  if (error instanceof OAuthException && OAUTH_ERRORS.includes(error.code)) return error.code;
  // The failed-authentication limit's 429 and a dependency away both answer temporarily_unavailable.
  if (error instanceof DependencyUnavailableError) return 'temporarily_unavailable';
  if (error instanceof ApiProblem) {
    if (error.status === 429 || error.status > 500) return 'temporarily_unavailable';
    if (error.status === 500) return 'server_error';
    return 'invalid_request';
  }
  return 'server_error';
}
