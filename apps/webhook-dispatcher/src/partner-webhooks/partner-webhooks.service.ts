import { Inject, Injectable } from '@nestjs/common';
import {
  API_LIMITS,
  AUTH_WEBHOOK_RECIPIENTS_BATCH,
  AUTH_WEBHOOK_SIGNING_KEYS,
  recipientsOfBatch,
  type EndpointEnableResponse,
  type PartnerDeliveryDetailResponse,
  type PartnerDeliveryPageResponse,
  type RedeliveryResponse,
  type ReplayResponse,
  type WebhookEndpointResponse,
  type WebhookRecipient,
  type WebhookSigningKeysResponse,
} from '@svc/contracts';
import { APP_CONFIG, newId, RpcClient } from '@svc/platform';
import type { PartnerPrincipal } from '@svc/security';
import type { WebhookDispatcherConfig } from '../config';
import { DeliveriesRepository } from '../deliveries/deliveries.repository';
import { WebhookSender } from '../deliveries/webhook-sender';
import { attemptHeaders, canonicalBody } from '../deliveries/webhook-signature';
import { attemptErrorKind } from './dto/attempt-error';
import { decodeDeliveryCursor, encodeDeliveryCursor } from './dto/delivery-cursor';
import { isDeliveryId, type DeliveryListQuery, type ReplayRequest } from './dto/delivery-requests.dto';
import { toDeliveryDetailResponse, toDeliveryResponse, toEndpointResponse } from './dto/delivery.response';
import { PartnerWebhooksException } from './partner-webhooks.exception';
import { PartnerWebhooksRepository } from './partner-webhooks.repository';

/**
 * The `user_id` of the `webhook.test` event that checks an endpoint before it is enabled: no
 * member is behind it (the event is a pointer to nobody; receivers acknowledge and ignore it).
 */
export const ENDPOINT_CHECK_USER = 'usr_endpoint_check';

/** Who asks: a partner over the API, or its portal session over RPC; only the client_id matters. */
export type CallingPartner = Pick<PartnerPrincipal, 'client_id'>;

/**
 * A partner's own webhooks: its delivery log, redeliveries and replays, and its endpoint's health
 * and state. Every read and write is bound to the calling partner's client_id: another partner's
 * delivery is not found, never forbidden.
 */
@Injectable()
export class PartnerWebhooksService {
  constructor(
    private readonly partnerWebhooks: PartnerWebhooksRepository,
    private readonly deliveries: DeliveriesRepository,
    private readonly rpc: RpcClient,
    private readonly sender: WebhookSender,
    @Inject(APP_CONFIG)
    private readonly config: Pick<
      WebhookDispatcherConfig,
      | 'WEBHOOK_TIMEOUT_MS'
      | 'WEBHOOK_REPLAYS_PER_HOUR'
      | 'WEBHOOK_REDELIVERIES_PER_HOUR'
      | 'WEBHOOK_ENDPOINT_CHECKS_PER_HOUR'
    >,
  ) {}

  async endpoint(partner: CallingPartner): Promise<WebhookEndpointResponse> {
    const recipient = await this.registered(partner.client_id);
    return toEndpointResponse(recipient.webhook_url, await this.partnerWebhooks.endpoint(partner.client_id));
  }

  /** The public halves of the partner's Ed25519 signing keys, from auth-server where they live. */
  signingKeys(partner: CallingPartner): Promise<WebhookSigningKeysResponse> {
    return this.rpc.call(AUTH_WEBHOOK_SIGNING_KEYS, { client_id: partner.client_id });
  }

  /** A new signing key (the portal's button); a partner without a webhook URL has nothing to sign. */
  async rotateSigningKey(partner: CallingPartner): Promise<WebhookSigningKeysResponse> {
    await this.registered(partner.client_id);
    return this.rpc.call(AUTH_WEBHOOK_SIGNING_KEYS, { client_id: partner.client_id, rotate: true });
  }

  async list(partner: CallingPartner, query: DeliveryListQuery): Promise<PartnerDeliveryPageResponse> {
    const after = query.cursor === undefined ? undefined : decodeDeliveryCursor(query.cursor);
    // One row more than the page: whether there is a next page, without a count.
    const rows = await this.partnerWebhooks.page(partner.client_id, query, after, query.limit + 1);
    const page = rows.slice(0, query.limit);
    const last = page[page.length - 1];
    return {
      items: page.map(toDeliveryResponse),
      next_cursor:
        rows.length > query.limit && last
          ? encodeDeliveryCursor({ createdAt: last.createdAtExact, deliveryId: last.deliveryId })
          : null,
    };
  }

  async get(partner: CallingPartner, deliveryId: string): Promise<PartnerDeliveryDetailResponse> {
    const delivery = await this.owned(partner.client_id, deliveryId);
    return toDeliveryDetailResponse(delivery, await this.deliveries.attemptsOf(deliveryId));
  }

  /**
   * A new attempt series for the same event (same id and body, a new delivery id), in the backlog
   * now (its row is its place there: DeliveryBacklog, a turn per partner); its attempts are signed with the partner's secrets as they are then. A delivery still retrying is
   * left to its own series, and a disabled endpoint gets nothing until it is enabled again. At most
   * WEBHOOK_REDELIVERIES_PER_HOUR per rolling hour: each can cost the dispatcher six attempts.
   */
  async redeliver(partner: CallingPartner, deliveryId: string): Promise<RedeliveryResponse> {
    const source = await this.owned(partner.client_id, deliveryId);
    await this.assertEnabled(partner.client_id);
    if (source.status === 'pending') {
      throw new PartnerWebhooksException(
        'still_retrying',
        `${deliveryId} is still being attempted (${source.attempts} attempt(s) so far` +
          `${source.nextAttemptAt ? `, next at ${source.nextAttemptAt.toISOString()}` : ''}); ` +
          'redeliver it once it is delivered or given up.',
      );
    }
    const perHour = this.config.WEBHOOK_REDELIVERIES_PER_HOUR;
    const outcome = await this.partnerWebhooks.redeliver(partner.client_id, deliveryId, perHour);
    if (outcome.retryAfterSeconds !== undefined) {
      throw new PartnerWebhooksException(
        'redelivery_budget_exceeded',
        `This partner has used its ${perHour} redeliveries per hour; retry after ${outcome.retryAfterSeconds} seconds.`,
        outcome.retryAfterSeconds,
      );
    }
    const [redeliveryId] = outcome.deliveryIds;
    if (redeliveryId === undefined) throw notFound(deliveryId);
    return {
      delivery_id: redeliveryId,
      event_id: source.eventId,
      redelivery_of: deliveryId,
      status: 'pending',
    };
  }

  /**
   * Sends again every delivery of the window with that status, each as a new delivery of the same
   * event (receivers that dedupe on the event id stay correct), into the backlog like a
   * redelivery: thousands of them wait their partner's own turn, never in front of another
   * partner's. At most 7 days per call (the parser's rule) and WEBHOOK_REPLAYS_PER_HOUR calls per
   * rolling hour.
   */
  async replay(partner: CallingPartner, request: ReplayRequest): Promise<ReplayResponse> {
    await this.assertEnabled(partner.client_id);
    const outcome = await this.partnerWebhooks.replay(partner.client_id, request, {
      perHour: this.config.WEBHOOK_REPLAYS_PER_HOUR,
      max: API_LIMITS.webhookReplayMaxDeliveries,
    });
    if (outcome.retryAfterSeconds !== undefined) {
      throw new PartnerWebhooksException(
        'replay_budget_exceeded',
        `This partner has used its ${this.config.WEBHOOK_REPLAYS_PER_HOUR} replays per hour; ` +
          `retry after ${outcome.retryAfterSeconds} seconds.`,
        outcome.retryAfterSeconds,
      );
    }
    return { replayed_count: outcome.deliveryIds.length };
  }

  /**
   * A `webhook.test` event to the registered URL, here and now, signed like any attempt and kept
   * in the log; the endpoint is enabled only when it is acknowledged with a 2xx. The answer says
   * what the attempt got either way. At most WEBHOOK_ENDPOINT_CHECKS_PER_HOUR per rolling hour,
   * tests included: each makes the dispatcher wait up to the webhook budget for the endpoint.
   */
  enable(partner: CallingPartner): Promise<EndpointEnableResponse> {
    return this.check(partner, true);
  }

  /** The same test event as `enable` sends, with the endpoint left as it is (the partner portal's test). */
  test(partner: CallingPartner): Promise<EndpointEnableResponse> {
    return this.check(partner, false);
  }

  private async check(partner: CallingPartner, enableOnSuccess: boolean): Promise<EndpointEnableResponse> {
    const recipient = await this.registered(partner.client_id);
    const perHour = this.config.WEBHOOK_ENDPOINT_CHECKS_PER_HOUR;
    const { retryAfterSeconds } = await this.partnerWebhooks.spendEndpointCheck(partner.client_id, perHour);
    if (retryAfterSeconds !== undefined) {
      throw new PartnerWebhooksException(
        'endpoint_check_budget_exceeded',
        `This partner has used its ${perHour} endpoint tests per hour (test events and enabling together); ` +
          `retry after ${retryAfterSeconds} seconds.`,
        retryAfterSeconds,
      );
    }
    const eventId = newId('evt', 16);
    const deliveryId = newId('dlv', 16);
    const startedAt = new Date();
    const body = canonicalBody({
      id: eventId,
      type: 'webhook.test',
      user_id: ENDPOINT_CHECK_USER,
      created_at: startedAt.toISOString(),
    });
    const outcome = await this.sender.post({
      clientId: partner.client_id,
      url: recipient.webhook_url,
      body,
      timeoutMs: this.config.WEBHOOK_TIMEOUT_MS,
      headers: attemptHeaders(
        { deliveryId, eventId, eventType: 'webhook.test', attempt: 1 },
        recipient,
        body,
      ),
    });
    const durationMs = Date.now() - startedAt.getTime();
    await this.partnerWebhooks.recordTest({
      deliveryId,
      eventId,
      userId: ENDPOINT_CHECK_USER,
      clientId: partner.client_id,
      targetUrl: recipient.webhook_url,
      body,
      startedAt,
      durationMs,
      statusCode: outcome.statusCode,
      error: outcome.error,
      responseBody: outcome.responseBody ?? null,
      ok: outcome.ok,
    });
    if (outcome.ok && enableOnSuccess)
      await this.partnerWebhooks.setStatus(partner.client_id, 'enabled', null);
    return {
      endpoint: toEndpointResponse(
        recipient.webhook_url,
        await this.partnerWebhooks.endpoint(partner.client_id),
      ),
      test: {
        event_id: eventId,
        delivery_id: deliveryId,
        response_status: outcome.statusCode,
        error: attemptErrorKind(outcome.statusCode, outcome.error),
        duration_ms: durationMs,
      },
    };
  }

  /** Another partner's delivery, or anything that cannot be a delivery id, is simply not found (never a 422). */
  private async owned(clientId: string, deliveryId: string) {
    const delivery = isDeliveryId(deliveryId) ? await this.partnerWebhooks.find(clientId, deliveryId) : null;
    if (!delivery) throw notFound(deliveryId);
    return delivery;
  }

  private async assertEnabled(clientId: string): Promise<void> {
    const endpoint = await this.partnerWebhooks.endpoint(clientId);
    if (endpoint.status === 'disabled') {
      throw new PartnerWebhooksException(
        'endpoint_disabled',
        'Your webhook endpoint is disabled: enable it (POST /v1/partners/webhooks/endpoint/enable) first.',
      );
    }
  }

  /**
   * The partner's URL and current secrets, as auth-server has them (the named-partner answer of a
   * `webhook.test`): none when no URL is registered or no secret is valid.
   */
  private async registered(clientId: string): Promise<WebhookRecipient> {
    const question = {
      user_id: ENDPOINT_CHECK_USER,
      event_type: 'webhook.test' as const,
      client_id: clientId,
    };
    const [recipients] = recipientsOfBatch(
      [question],
      await this.rpc.call(AUTH_WEBHOOK_RECIPIENTS_BATCH, { questions: [question] }),
    );
    const recipient = recipients.find((r) => r.client_id === clientId);
    if (!recipient) {
      throw new PartnerWebhooksException(
        'webhook_not_registered',
        'No webhook URL is registered for this partner; ask partner support to register one.',
      );
    }
    return recipient;
  }
}

function notFound(deliveryId: string): PartnerWebhooksException {
  return new PartnerWebhooksException(
    'delivery_not_found',
    `No delivery ${deliveryId.slice(0, 100)} among yours.`,
  );
}
