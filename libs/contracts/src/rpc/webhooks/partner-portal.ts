import { API_LIMITS } from '../../limits';
import type {
  EndpointEnableResponse,
  PartnerDeliveryDetailResponse,
  PartnerDeliveryPageResponse,
  RedeliveryResponse,
  ReplayResponse,
  WebhookEndpointResponse,
  WebhookSigningKeysResponse,
} from '../../responses';
import { fieldsContract, oneOf, optional, readRecord, readStringMap, text, type Read } from '../../validate';
import { portalAnswer, readObject } from '../portal-answer';
import { ContractViolation } from '../rpc';

/**
 * The portal's questions to webhook-dispatcher, answered by the `/v1/partners/webhooks/*` services.
 * `client_id` is trusted: only consent-ui may ask, and it takes it from its portal session row.
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
  /** The Ed25519 keys that sign its deliveries (`GET /v1/partners/webhooks/signing-keys`). */
  readonly signing_keys: WebhookSigningKeysResponse['data'];
}

export const WEBHOOKS_PORTAL_OVERVIEW = fieldsContract(
  'webhooks.portal.overview',
  ['consent-ui'],
  { client_id: clientId },
  portalAnswer(readObject<PortalEndpointOverview>),
);

/** `query`: the delivery list's query parameters as the page's filter form sent them. */
export const WEBHOOKS_PORTAL_DELIVERIES = fieldsContract(
  'webhooks.portal.deliveries',
  ['consent-ui'],
  { client_id: clientId, query: readStringMap },
  portalAnswer(readObject<PartnerDeliveryPageResponse>),
);

export const WEBHOOKS_PORTAL_DELIVERY = fieldsContract(
  'webhooks.portal.delivery',
  ['consent-ui'],
  { client_id: clientId, delivery_id: text(API_LIMITS.idMaxLength) },
  portalAnswer(readObject<PartnerDeliveryDetailResponse>),
);

export const PORTAL_WEBHOOK_ACTIONS = [
  'redeliver',
  'replay',
  'enable',
  'test',
  'rotate_signing_key',
] as const;
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
  | { readonly action: 'enable' | 'test'; readonly test: EndpointEnableResponse }
  | { readonly action: 'rotate_signing_key'; readonly signing_keys: WebhookSigningKeysResponse };

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
    case 'rotate_signing_key':
      return { action: 'rotate_signing_key', signing_keys: readObject(pattern, r.signing_keys) };
    default:
      throw new ContractViolation(pattern, '`action` must be a portal action');
  }
}

export const WEBHOOKS_PORTAL_ACTION = fieldsContract(
  'webhooks.portal.action',
  ['consent-ui'],
  ACTION_REQUEST,
  portalAnswer(readActionResult),
);
