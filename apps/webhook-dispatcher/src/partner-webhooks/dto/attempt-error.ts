import type { DeliveryAttemptError } from '@svc/contracts';
import { NOT_A_RECIPIENT_ERROR } from '../../deliveries/delivery.entity';

/**
 * The kind of a failed attempt that got no answer, read from the text the attempt recorded
 * (WebhookSender's own words, or Node's error codes). The text itself stays for operators: it can
 * name addresses the SSRF guard saw, which is the service's business, not the partner's.
 */
export function attemptErrorKind(
  statusCode: number | null,
  error: string | null,
): DeliveryAttemptError | null {
  if (statusCode !== null || error === null) return null;
  if (error === 'timeout') return 'timeout';
  if (error === NOT_A_RECIPIENT_ERROR) return 'not_a_recipient';
  if (error.startsWith('target refused')) return 'blocked_address';
  if (/ECONNREFUSED/.test(error)) return 'connection_refused';
  if (/ECONNRESET|EPIPE|socket hang up/i.test(error)) return 'connection_reset';
  if (/ENOTFOUND|EAI_AGAIN|getaddrinfo/.test(error)) return 'dns';
  if (/certificate|CERT_|SSL|TLS|self[- ]signed|handshake/i.test(error)) return 'tls';
  return 'other';
}
