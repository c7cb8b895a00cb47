import { Injectable } from '@nestjs/common';
import type { EventType, Scope, WebhookRecipientsRequest, WebhookRecipientsResponse } from '@svc/contracts';
import { SecretBox } from '../crypto/secrets';
import { WebhookRecipientsRepository, type RecipientRow } from './webhook-recipients.repository';

/** The scope a partner needs to hear of an event; null: only the partner the event names. */
export function scopeForEvent(type: EventType): Scope | null {
  switch (type) {
    case 'user.profile.updated':
      return 'profile:read';
    case 'user.sea_time.updated':
      return 'seatime:read';
    case 'user.vessels.updated':
      return 'vessels:read';
    case 'user.consent.revoked':
    case 'webhook.test':
      return null;
    default:
      return assertUnreachable(type);
  }
}

function assertUnreachable(value: never): never {
  throw new Error(`unhandled event type ${String(value)}`);
}

@Injectable()
export class WebhookRecipientsService {
  constructor(
    private readonly recipients: WebhookRecipientsRepository,
    private readonly box: SecretBox,
  ) {}

  async find(request: WebhookRecipientsRequest): Promise<WebhookRecipientsResponse> {
    const scope = scopeForEvent(request.event_type);
    let rows: RecipientRow[];
    if (scope !== null) rows = await this.recipients.consenting(request.user_id, scope);
    else if (request.client_id !== undefined) rows = await this.recipients.named(request.client_id);
    else rows = [];
    return {
      recipients: rows
        .filter((r) => r.sealedSecrets.length > 0)
        .map((r) => ({
          client_id: r.clientId,
          webhook_url: r.webhookUrl,
          secrets: r.sealedSecrets.map((s) => this.box.open(s)),
        })),
    };
  }
}
