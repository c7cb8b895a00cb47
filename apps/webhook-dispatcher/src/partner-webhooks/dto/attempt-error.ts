import { DELIVERY_ATTEMPT_ERRORS, type DeliveryAttemptError } from '@svc/contracts';
import { NOT_A_RECIPIENT_ERROR } from '../../deliveries/delivery.entity';

const KINDS: ReadonlySet<string> = new Set(DELIVERY_ATTEMPT_ERRORS);

/**
 * The kind of a failed attempt that got no answer, read from the text the attempt recorded: the
 * kind itself, with Node's error code (`connection_refused (ECONNREFUSED)`), as WebhookSender
 * records it; older rows hold Node's messages, matched by their codes. The text itself stays for
 * operators: it can name addresses the SSRF guard saw, which is the service's business, not the
 * partner's, who sees the kind only.
 */
export function attemptErrorKind(
  statusCode: number | null,
  error: string | null,
): DeliveryAttemptError | null {
  if (statusCode !== null || error === null) return null;
  const leading = /^([a-z_]+)(?: \(|$)/.exec(error)?.[1];
  if (leading !== undefined && KINDS.has(leading)) return leading as DeliveryAttemptError;
  if (error === NOT_A_RECIPIENT_ERROR) return 'not_a_recipient';
  if (error.startsWith('target refused')) return 'blocked_address';
  if (/ECONNREFUSED/.test(error)) return 'connection_refused';
  if (/ECONNRESET|EPIPE|socket hang up/i.test(error)) return 'connection_reset';
  if (/ENOTFOUND|EAI_AGAIN|getaddrinfo/.test(error)) return 'dns';
  if (/certificate|CERT_|SSL|TLS|self[- ]signed|handshake/i.test(error)) return 'tls';
  return 'other';
}
