import type {
  DeliveryAttemptResponse,
  PartnerDeliveryDetailResponse,
  PartnerDeliveryResponse,
  WebhookEndpointResponse,
} from '@svc/contracts';
import type { LoggedAttempt } from '../../deliveries/deliveries.repository';
import type { EndpointState, PartnerDelivery } from '../partner-webhooks.repository';
import { attemptErrorKind } from './attempt-error';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function toDeliveryResponse(d: PartnerDelivery): PartnerDeliveryResponse {
  return {
    delivery_id: d.deliveryId,
    event_id: d.eventId,
    event_type: d.eventType as PartnerDeliveryResponse['event_type'],
    user_id: d.userId,
    status: d.partnerStatus,
    attempt_count: d.attempts,
    created_at: d.createdAt.toISOString(),
    last_attempt_at: iso(d.lastAttemptAt),
    next_attempt_at: d.status === 'pending' ? iso(d.nextAttemptAt) : null,
    last_response_status: d.lastResponseStatus,
  };
}

export function toAttemptResponse(a: LoggedAttempt): DeliveryAttemptResponse {
  return {
    attempt: a.attempt,
    attempted_at: a.startedAt.toISOString(),
    response_status: a.statusCode,
    error: attemptErrorKind(a.statusCode, a.error),
    duration_ms: a.durationMs,
    response_body: a.responseBody,
  };
}

export function toDeliveryDetailResponse(
  d: PartnerDelivery,
  attempts: readonly LoggedAttempt[],
): PartnerDeliveryDetailResponse {
  return {
    ...toDeliveryResponse(d),
    given_up_reason: d.status === 'failed' ? (d.giveUpReason ?? 'attempts_exhausted') : null,
    redelivery_of: d.redeliveryOf,
    attempts: attempts.map(toAttemptResponse),
  };
}

export function toEndpointResponse(url: string, e: EndpointState): WebhookEndpointResponse {
  return {
    url,
    status: e.status,
    disabled_at: e.status === 'disabled' ? iso(e.disabledAt) : null,
    disabled_reason:
      e.status === 'disabled' ? ((e.disabledReason ?? 'operator') as 'failing' | 'operator') : null,
    last_success_at: iso(e.lastSuccessAt),
    last_failure_at: iso(e.lastFailureAt),
    attempts_24h: e.attempts24h,
    success_rate_24h: e.attempts24h === 0 ? null : Math.round((e.successes24h / e.attempts24h) * 1000) / 1000,
  };
}
