import { API_LIMITS, DAY_MS, DELIVERY_LIST_QUERY, REPLAY_BODY, type FieldValues } from '@svc/contracts';
import { FieldReader } from '@svc/platform';

const DELIVERY_ID = /^dlv_[A-Za-z0-9_-]{1,96}$/;

/** The list's filters and page, `limit` defaulted. */
export type DeliveryListQuery = Partial<Omit<FieldValues<typeof DELIVERY_LIST_QUERY>, 'limit'>> & {
  readonly limit: number;
};

/** `GET /v1/partners/webhooks/deliveries?status=&event_type=&since=&until=&limit=&cursor=` */
export function parseDeliveryListQuery(query: unknown): DeliveryListQuery {
  const reader = FieldReader.query(query);
  const fields = reader.fields(DELIVERY_LIST_QUERY);
  reader.done();
  return { ...fields, limit: fields.limit ?? API_LIMITS.pageLimitDefault };
}

/** A `{delivery_id}` path parameter: anything else cannot be a delivery, so it is simply not found. */
export function isDeliveryId(text: string): boolean {
  return DELIVERY_ID.test(text);
}

export type ReplayRequest = FieldValues<typeof REPLAY_BODY>;

/** `POST /v1/partners/webhooks/replay`, then the window: `until` after `since`, at most 7 days. */
export function parseReplay(body: unknown): ReplayRequest {
  const reader = FieldReader.body(body);
  const { since, until, status } = reader.fields(REPLAY_BODY);
  const maxDays = API_LIMITS.webhookRedeliveryReplayMaxDays;
  // Only when both parsed (a field that did not has its own error already).
  if (reader.has('since') && reader.has('until') && since.getTime() > 0 && until.getTime() > 0) {
    if (until <= since) reader.fail('until', 'must be after since');
    else if (until.getTime() - since.getTime() > maxDays * DAY_MS) {
      reader.fail(
        'until',
        `must be at most ${maxDays} days after since; replay a longer outage in several calls`,
      );
    }
  }
  reader.done();
  return { since, until, status };
}
