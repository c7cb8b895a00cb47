import { Injectable } from '@nestjs/common';
import { TransactionRunner } from '@svc/platform';

export interface RecipientRow {
  readonly clientId: string;
  readonly webhookUrl: string;
  readonly sealedSecrets: string[];
}

interface Row {
  client_id: string;
  webhook_url: string;
  webhook_secret_current: string | null;
  webhook_secret_next: string | null;
}

/** One set-based statement per question: partners joined with the member's active consents. */
@Injectable()
export class WebhookRecipientsRepository {
  constructor(private readonly transactions: TransactionRunner) {}

  /** Partners with an active consent of `userId` that includes `scope`, a URL, not suspended. */
  async consenting(userId: string, scope: string): Promise<RecipientRow[]> {
    const rows = await this.transactions.outside.query<Row[]>(
      `SELECT p.client_id, p.webhook_url, p.webhook_secret_current, p.webhook_secret_next
         FROM consents c JOIN partners p ON p.client_id = c.client_id
        WHERE c.user_id = $1 AND c.revoked_at IS NULL AND $2 = ANY (c.scopes)
          AND p.webhook_url IS NOT NULL AND NOT p.suspended
        ORDER BY p.client_id`,
      [userId, scope],
    );
    return rows.map(toRow);
  }

  /** The one partner an event names (consent revoked, test event), if it can receive webhooks. */
  async named(clientId: string): Promise<RecipientRow[]> {
    const rows = await this.transactions.outside.query<Row[]>(
      `SELECT client_id, webhook_url, webhook_secret_current, webhook_secret_next
         FROM partners
        WHERE client_id = $1 AND webhook_url IS NOT NULL AND NOT suspended`,
      [clientId],
    );
    return rows.map(toRow);
  }
}

function toRow(r: Row): RecipientRow {
  return {
    clientId: r.client_id,
    webhookUrl: r.webhook_url,
    sealedSecrets: [r.webhook_secret_current, r.webhook_secret_next].filter((s): s is string => s !== null),
  };
}
