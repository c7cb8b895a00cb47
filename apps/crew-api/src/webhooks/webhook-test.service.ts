import { Injectable } from '@nestjs/common';
import { AUTH_WEBHOOK_TARGET, CREW_EVENTS_EXCHANGE, type ServiceEvent } from '@svc/contracts';
import { newId, OutboxRepository, RpcClient, TransactionRunner } from '@svc/platform';
import type { Principal } from '@svc/security';
import type { WebhookTestResponse } from '@svc/contracts';
import { WebhookNotRegisteredException } from './webhook-test.exception';

@Injectable()
export class WebhookTestService {
  constructor(
    private readonly rpc: RpcClient,
    private readonly outbox: OutboxRepository,
    private readonly transactions: TransactionRunner,
  ) {}

  /** A `webhook.test` event through the outbox (never lost), its ids chosen here so the partner can match it. */
  async send(principal: Principal): Promise<WebhookTestResponse> {
    // The URL only: signing (and the secrets it needs) is the dispatcher's job.
    const { webhook_url } = await this.rpc.call(AUTH_WEBHOOK_TARGET, {
      user_id: principal.user_id,
      client_id: principal.client_id,
    });
    if (webhook_url === null) throw new WebhookNotRegisteredException(principal.client_id);
    const event: ServiceEvent = {
      id: newId('evt'),
      type: 'webhook.test',
      user_id: principal.user_id,
      client_id: principal.client_id,
      delivery_id: newId('dlv'),
      created_at: new Date().toISOString(),
    };
    await this.transactions.run((tx) => this.outbox.addEvent(tx, CREW_EVENTS_EXCHANGE, event));
    return { event_id: event.id, delivery_id: event.delivery_id!, target_url: webhook_url };
  }
}
