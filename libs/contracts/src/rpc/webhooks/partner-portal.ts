import { API_LIMITS } from '../../limits';
import type {
  EndpointEnableResponse,
  PartnerDeliveryDetailResponse,
  PartnerDeliveryPageResponse,
  RedeliveryResponse,
  ReplayResponse,
  WebhookEndpointResponse,
} from '../../responses';
import { oneOf, optional, readFields, readRecord, readStringMap, text, type Read } from '../../validate';
import { readObject, readPortalAnswer, type PortalAnswer } from '../portal-answer';
import { ContractViolation, RPC_QUEUES, type RpcContract } from '../rpc';

/**
 * The partner portal's questions to webhook-dispatcher, each bound to the client_id of the portal
 * session that asks (consent-ui's, never a value from the page). Each is answered by the same
 * service methods as `/v1/partners/webhooks/*`, with the API's body or Problem.
 */
const clientId = text(API_LIMITS.idMaxLength);

/** The endpoint's attempts in one hour of the last 24 (the health chart). */
export interface EndpointHour {
  /** ISO 8601 UTC, the start of the hour. */
  readonly hour: string;
  readonly attempts: number;
  readonly successes: number;
}

export interface PortalEndpointOverview {
  readonly endpoint: WebhookEndpointResponse;
  /** The 24 hours ending with the current one, oldest first; hours without attempts count 0. */
  readonly hours: readonly EndpointHour[];
}

function contract<Q extends Parameters<typeof readFields>[2], T>(
  pattern: string,
  request: Q,
): RpcContract<Read<Q>, PortalAnswer<T>> {
  return {
    pattern,
    queue: RPC_QUEUES.webhookDispatcher,
    parseRequest: (input) => readFields(pattern, input, request),
    parseResponse: (input) => readPortalAnswer(pattern, input, readObject<T>),
  };
}

export const WEBHOOKS_PORTAL_OVERVIEW = contract<{ client_id: typeof clientId }, PortalEndpointOverview>(
  'webhooks.portal.overview',
  { client_id: clientId },
);

/** `query`: the delivery list's query parameters as the page's filter form sent them. */
export const WEBHOOKS_PORTAL_DELIVERIES = contract<
  { client_id: typeof clientId; query: typeof readStringMap },
  PartnerDeliveryPageResponse
>('webhooks.portal.deliveries', { client_id: clientId, query: readStringMap });

export const WEBHOOKS_PORTAL_DELIVERY = contract<
  { client_id: typeof clientId; delivery_id: ReturnType<typeof text> },
  PartnerDeliveryDetailResponse
>('webhooks.portal.delivery', { client_id: clientId, delivery_id: text(API_LIMITS.idMaxLength) });

export const PORTAL_WEBHOOK_ACTIONS = ['redeliver', 'replay', 'enable', 'test'] as const;
export type PortalWebhookAction = (typeof PORTAL_WEBHOOK_ACTIONS)[number];

const ACTION_REQUEST = {
  client_id: clientId,
  /** The public reference of the portal session that acts (recorded with the action). */
  portal_session: text(100),
  action: oneOf(PORTAL_WEBHOOK_ACTIONS),
  /** `redeliver`: the delivery. */
  delivery_id: optional(text(API_LIMITS.idMaxLength)),
  /** `replay`: `since`, `until`, `status` as the form sent them (the API's body). */
  window: optional(readStringMap),
};
export type PortalWebhookActionRequest = Read<typeof ACTION_REQUEST>;

export type PortalWebhookActionResult =
  | { readonly action: 'redeliver'; readonly redelivery: RedeliveryResponse }
  | { readonly action: 'replay'; readonly replay: ReplayResponse }
  | { readonly action: 'enable' | 'test'; readonly test: EndpointEnableResponse };

function readActionResult(pattern: string, input: unknown): PortalWebhookActionResult {
  const r = readRecord(pattern, input);
  switch (r.action) {
    case 'redeliver':
      return { action: 'redeliver', redelivery: readObject(pattern, r.redelivery) };
    case 'replay':
      return { action: 'replay', replay: readObject(pattern, r.replay) };
    case 'enable':
    case 'test':
      return { action: r.action, test: readObject(pattern, r.test) };
    default:
      throw new ContractViolation(pattern, '`action` must be a portal action');
  }
}

const ACTION = 'webhooks.portal.action';

export const WEBHOOKS_PORTAL_ACTION: RpcContract<
  PortalWebhookActionRequest,
  PortalAnswer<PortalWebhookActionResult>
> = {
  pattern: ACTION,
  queue: RPC_QUEUES.webhookDispatcher,
  parseRequest: (input) => readFields(ACTION, input, ACTION_REQUEST),
  parseResponse: (input) => readPortalAnswer(ACTION, input, readActionResult),
};
