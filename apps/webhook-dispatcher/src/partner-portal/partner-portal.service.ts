import { Inject, Injectable } from '@nestjs/common';
import {
  toPortalProblem,
  type PartnerDeliveryDetailResponse,
  type PartnerDeliveryPageResponse,
  type PortalAnswer,
  type PortalEndpointOverview,
  type PortalWebhookActionRequest,
  type PortalWebhookActionResult,
} from '@svc/contracts';
import { ApiProblem, APP_CONFIG } from '@svc/platform';
import type { WebhookDispatcherConfig } from '../config';
import { PartnerSlots } from '../deliveries/partner-slots';
import { parseDeliveryListQuery, parseReplay } from '../partner-webhooks/dto/delivery-requests.dto';
import { partnerWebhooksProblem } from '../partner-webhooks/partner-webhooks-problem.mapper';
import { PartnerWebhooksService, type CallingPartner } from '../partner-webhooks/partner-webhooks.service';
import { PartnerPortalRepository } from './partner-portal.repository';

/**
 * The partner portal's view of a partner's webhooks, asked over RPC by consent-ui for the partner
 * of a portal session. Every read and action goes through PartnerWebhooksService and the API's own
 * parsers, so the portal has exactly the API's rules (budgets, 409 while retrying, the 7-day
 * replay window), and a refusal is the Problem the API would answer.
 *
 * One partner's questions hold at most a tenth of this process's RPC consumer (AMQP_PREFETCH) at
 * once; beyond that they are answered at once with 429 (retry in a second), so a partner whose
 * test events wait 5 s on an endpoint that hangs, or whose replays queue on its budget lock,
 * never keeps another partner's portal waiting. Every partner's portal shares that consumer.
 */
@Injectable()
export class PartnerPortalService {
  private readonly slots: PartnerSlots;

  constructor(
    private readonly webhooks: PartnerWebhooksService,
    private readonly portal: PartnerPortalRepository,
    @Inject(APP_CONFIG) config: Pick<WebhookDispatcherConfig, 'AMQP_PREFETCH'>,
  ) {
    this.slots = new PartnerSlots(portalSlotsPerPartner(config.AMQP_PREFETCH));
  }

  overview(clientId: string): Promise<PortalAnswer<PortalEndpointOverview>> {
    return this.inTurn(clientId, async () => {
      const partner = { client_id: clientId };
      const [endpoint, hours, keys] = await Promise.all([
        this.webhooks.endpoint(partner),
        this.portal.hours(clientId),
        this.webhooks.signingKeys(partner),
      ]);
      return { endpoint, hours, signing_keys: keys.data };
    });
  }

  deliveries(
    clientId: string,
    query: Record<string, string>,
  ): Promise<PortalAnswer<PartnerDeliveryPageResponse>> {
    return this.inTurn(clientId, () =>
      this.webhooks.list({ client_id: clientId }, parseDeliveryListQuery(query)),
    );
  }

  delivery(clientId: string, deliveryId: string): Promise<PortalAnswer<PartnerDeliveryDetailResponse>> {
    return this.inTurn(clientId, () => this.webhooks.get({ client_id: clientId }, deliveryId));
  }

  /** Runs the action and records it with the portal session that asked, whatever the outcome. */
  async act(request: PortalWebhookActionRequest): Promise<PortalAnswer<PortalWebhookActionResult>> {
    const partner: CallingPartner = { client_id: request.client_id };
    const result = await this.inTurn(request.client_id, () => this.run(partner, request));
    await this.portal.record({
      clientId: request.client_id,
      portalSession: request.portal_session,
      action: request.action,
      subject: {
        ...(request.delivery_id !== undefined ? { delivery_id: request.delivery_id.slice(0, 200) } : {}),
        ...(request.action === 'replay' ? pick(request.window ?? {}, ['since', 'until', 'status']) : {}),
      },
      outcome: result.ok ? 'ok' : result.problem.code,
    });
    return result;
  }

  /** `work` as an answer, in one of the partner's slots, or a 429 at once when it has none free. */
  private async inTurn<T>(clientId: string, work: () => Promise<T>): Promise<PortalAnswer<T>> {
    const release = this.slots.tryTake(clientId);
    if (!release) {
      return {
        ok: false,
        problem: {
          status: 429,
          code: 'rate_limit_exceeded',
          detail: `Your portal already has ${this.slots.inUse(clientId)} requests under way; retry in a second.`,
          retry_after: 1,
        },
      };
    }
    try {
      return await answer(work);
    } finally {
      release();
    }
  }

  private async run(
    partner: CallingPartner,
    request: PortalWebhookActionRequest,
  ): Promise<PortalWebhookActionResult> {
    switch (request.action) {
      case 'redeliver':
        return {
          action: 'redeliver',
          redelivery: await this.webhooks.redeliver(partner, request.delivery_id ?? ''),
        };
      case 'replay':
        return {
          action: 'replay',
          replay: await this.webhooks.replay(partner, parseReplay(request.window ?? {})),
        };
      case 'enable':
        return { action: 'enable', test: await this.webhooks.enable(partner) };
      case 'test':
        return { action: 'test', test: await this.webhooks.test(partner) };
      case 'rotate_signing_key':
        return { action: 'rotate_signing_key', signing_keys: await this.webhooks.rotateSigningKey(partner) };
    }
  }
}

/** A tenth of the consumer's prefetch, at least one: it takes ten partners stuck at once to fill it. */
export function portalSlotsPerPartner(prefetch: number): number {
  return Math.max(1, Math.floor(prefetch / 10));
}

function pick(record: Readonly<Record<string, string>>, keys: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of keys) if (typeof record[key] === 'string') out[key] = record[key].slice(0, 100);
  return out;
}

/**
 * The result, or the Problem the API would have answered (the same mapper as the HTTP routes).
 * Anything else (a database down, a bug) stays an RPC failure: the portal shows its error page.
 */
async function answer<T>(work: () => Promise<T>): Promise<PortalAnswer<T>> {
  try {
    return { ok: true, result: await work() };
  } catch (err) {
    const problem = err instanceof ApiProblem ? err : partnerWebhooksProblem(err);
    if (!problem) throw err;
    return { ok: false, problem: toPortalProblem(problem) };
  }
}
