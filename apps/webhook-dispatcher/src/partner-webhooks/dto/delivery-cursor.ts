import { API_LIMITS } from '@svc/contracts';
import { PartnerWebhooksException } from '../partner-webhooks.exception';
import type { ListPosition } from '../partner-webhooks.repository';

/**
 * The delivery list's keyset position, opaque to partners: `base64url(JSON {t, id})`, `t` the last
 * delivery's created_at to the microsecond. Only the caller's own deliveries are ever read, so a
 * forged cursor can show nothing the caller could not list.
 */
const EXACT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const ID = /^dlv_[A-Za-z0-9_-]{1,96}$/;

function invalid(): PartnerWebhooksException {
  return new PartnerWebhooksException(
    'invalid_cursor',
    'The cursor is not one this API issued for this list; start again from the first page.',
  );
}

export function encodeDeliveryCursor(position: ListPosition): string {
  return Buffer.from(JSON.stringify({ t: position.createdAt, id: position.deliveryId })).toString(
    'base64url',
  );
}

export function decodeDeliveryCursor(text: string): ListPosition {
  if (text.length > API_LIMITS.seatCursorMaxLength || !/^[A-Za-z0-9_-]+$/.test(text)) throw invalid();
  let data: unknown;
  try {
    data = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  const c = (typeof data === 'object' && data !== null ? data : {}) as Record<string, unknown>;
  if (
    typeof c.t !== 'string' ||
    !EXACT.test(c.t) ||
    Number.isNaN(Date.parse(c.t)) ||
    typeof c.id !== 'string' ||
    !ID.test(c.id)
  ) {
    throw invalid();
  }
  return { createdAt: c.t, deliveryId: c.id };
}
