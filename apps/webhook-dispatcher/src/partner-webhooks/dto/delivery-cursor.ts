import { API_LIMITS } from '@svc/contracts';
import { decodeCursorFields, encodeCursorFields, isExactInstant } from '@svc/platform';
import { PartnerWebhooksException } from '../partner-webhooks.exception';
import type { ListPosition } from '../partner-webhooks.repository';
import { isDeliveryId } from './delivery-requests.dto';

function invalid(): PartnerWebhooksException {
  return new PartnerWebhooksException(
    'invalid_cursor',
    'The cursor is not one this API issued for this list; start again from the first page.',
  );
}

/**
 * The delivery list's keyset position, opaque to partners: `base64url(JSON {t, id})`, `t` the last
 * delivery's created_at to the microsecond. Only the caller's own deliveries are ever read, so a
 * forged cursor can show nothing the caller could not list.
 */
export function encodeDeliveryCursor(position: ListPosition): string {
  return encodeCursorFields({ t: position.createdAt, id: position.deliveryId });
}

export function decodeDeliveryCursor(text: string): ListPosition {
  const c = decodeCursorFields(text, API_LIMITS.seatCursorMaxLength);
  if (!c || !isExactInstant(c.t) || typeof c.id !== 'string' || !isDeliveryId(c.id)) throw invalid();
  return { createdAt: c.t, deliveryId: c.id };
}
