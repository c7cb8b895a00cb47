import { Injectable } from '@nestjs/common';
import {
  recipientsOfBatch,
  type EventType,
  type Scope,
  type WebhookRecipientsBatchResponse,
  type WebhookRecipientsRequest,
  type WebhookTargetRequest,
  type WebhookTargetResponse,
} from '@svc/contracts';
import { SecretBox } from '../crypto/secrets';
import {
  WebhookRecipientsRepository,
  type ConsentQuestion,
  type RecipientRow,
} from './webhook-recipients.repository';

/** The scope a partner needs to hear of an event; null: only the partner the event names. */
export const SCOPE_FOR_EVENT: Readonly<Record<EventType, Scope | null>> = {
  'user.profile.updated': 'profile:read',
  'user.sea_time.updated': 'seatime:read',
  'user.vessels.updated': 'vessels:read',
  'user.consent.revoked': null,
  'webhook.test': null,
};

@Injectable()
export class WebhookRecipientsService {
  constructor(
    private readonly recipients: WebhookRecipientsRepository,
    private readonly box: SecretBox,
  ) {}

  /** Where the named partner would receive a `webhook.test` event: the URL, never the secrets. */
  async target(request: WebhookTargetRequest): Promise<WebhookTargetResponse> {
    const question = { ...request, event_type: 'webhook.test' as const };
    const [recipients] = recipientsOfBatch([question], await this.findMany([question]));
    const found = recipients.find((r) => r.client_id === request.client_id);
    return { webhook_url: found ? found.webhook_url : null };
  }

  /**
   * Every question of a batch with at most two statements (consenting partners, named partners),
   * each partner's secrets opened once. A partner without a valid secret cannot sign, so it
   * receives nothing.
   */
  async findMany(questions: readonly WebhookRecipientsRequest[]): Promise<WebhookRecipientsBatchResponse> {
    const consentQuestions: (ConsentQuestion & { index: number })[] = [];
    const namedQuestions: { index: number; clientId: string }[] = [];
    questions.forEach((q, index) => {
      const scope = SCOPE_FOR_EVENT[q.event_type];
      if (scope !== null) consentQuestions.push({ index, userId: q.user_id, scope });
      else if (q.client_id !== undefined) namedQuestions.push({ index, clientId: q.client_id });
    });
    const [consenting, named] = await Promise.all([
      this.recipients.consenting(consentQuestions),
      this.recipients.named([...new Set(namedQuestions.map((q) => q.clientId))]),
    ]);

    const answers = questions.map(() => ({ client_ids: [] as string[] }));
    const partners = new Map<string, RecipientRow>();
    const add = (index: number, row: RecipientRow) => {
      if (row.sealedSecrets.length === 0) return;
      partners.set(row.clientId, row);
      answers[index].client_ids.push(row.clientId);
    };
    for (const { index, row } of consenting) add(consentQuestions[index].index, row);
    const namedById = new Map(named.map((r) => [r.clientId, r]));
    for (const q of namedQuestions) {
      const row = namedById.get(q.clientId);
      if (row) add(q.index, row);
    }
    return {
      partners: [...partners.values()].map((r) => ({
        client_id: r.clientId,
        webhook_url: r.webhookUrl,
        secrets: r.sealedSecrets.map((s) => this.box.open(s)),
        signing_keys: r.sealedKeys.map((k) => ({ id: k.id, private_key: this.box.open(k.privateKey) })),
      })),
      answers,
    };
  }
}
