import { Injectable } from '@nestjs/common';
import { Sql } from '@svc/platform';

export interface RecipientRow {
  readonly clientId: string;
  readonly webhookUrl: string;
  readonly sealedSecrets: string[];
  /** Its signing keys in use, oldest first, each private key sealed. */
  readonly sealedKeys: { id: string; privateKey: string }[];
}

/**
 * The partner columns a delivery needs, its valid secrets the current one first; both statements
 * select only partners with a URL.
 */
const RECIPIENT = `p.client_id AS "clientId", p.webhook_url AS "webhookUrl",
   array_remove(ARRAY[p.webhook_secret_current, p.webhook_secret_next], NULL) AS "sealedSecrets",
   (SELECT COALESCE(json_agg(json_build_object('id', k.id, 'privateKey', k.private_key) ORDER BY k.created_at), '[]')
      FROM webhook_signing_keys k
     WHERE k.client_id = p.client_id AND (k.expires_at IS NULL OR k.expires_at > now())) AS "sealedKeys"`;

/** One question of a batch about consenting partners: member and the scope its event needs. */
export interface ConsentQuestion {
  readonly userId: string;
  readonly scope: string;
}

/** Set-based statements, one per kind of question, however many questions a batch holds. */
@Injectable()
export class WebhookRecipientsRepository {
  constructor(private readonly sql: Sql) {}

  /**
   * For each question, the partners with an active consent of its member that includes its scope,
   * a URL, and not suspended; `index` is the question's position in the list.
   */
  async consenting(questions: readonly ConsentQuestion[]): Promise<{ index: number; row: RecipientRow }[]> {
    if (questions.length === 0) return [];
    const rows = await this.sql.rows<RecipientRow & { i: string }>(
      `SELECT q.i, ${RECIPIENT}
         FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS q (user_id, scope, i)
         JOIN consents c ON c.user_id = q.user_id AND c.revoked_at IS NULL AND q.scope = ANY (c.scopes)
         JOIN partners p ON p.client_id = c.client_id
        WHERE p.webhook_url IS NOT NULL AND NOT p.suspended
        ORDER BY q.i, p.client_id`,
      [questions.map((q) => q.userId), questions.map((q) => q.scope)],
    );
    return rows.map(({ i, ...row }) => ({ index: Number(i) - 1, row }));
  }

  /** The partners named (consent revoked, test event) that can receive webhooks. */
  async named(clientIds: readonly string[]): Promise<RecipientRow[]> {
    if (clientIds.length === 0) return [];
    return this.sql.rows<RecipientRow>(
      `SELECT ${RECIPIENT}
         FROM partners p
        WHERE p.client_id = ANY ($1::text[]) AND p.webhook_url IS NOT NULL AND NOT p.suspended`,
      [[...clientIds]],
    );
  }
}
