import type { EventType, WebhookRecipient } from '@svc/contracts';

/**
 * auth-server's answer "partner P receives event type T of member U, at this URL, signed with
 * these secrets", kept in memory for a few seconds so that an attempt right after the fan-out (or
 * after another attempt) does not ask again. Only the attempts read it; the fan-out always asks,
 * so a revoked consent stops new events at once. The cost of the TTL: a rotated secret, a revoked
 * consent or a suspension reaches attempts already under way within `ttlMs`. Secrets live only
 * here, in the process's memory, never on disk or in logs. Bounded: the oldest entries go first.
 */
export class RecipientCache {
  private readonly entries = new Map<
    string,
    { readonly recipient: WebhookRecipient; readonly until: number }
  >();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Remembers every recipient of one answer of auth-server. */
  remember(userId: string, eventType: EventType, recipients: readonly WebhookRecipient[]): void {
    if (this.ttlMs <= 0) return;
    const until = this.now() + this.ttlMs;
    for (const recipient of recipients) {
      const key = keyOf(recipient.client_id, userId, eventType);
      this.entries.delete(key);
      this.entries.set(key, { recipient, until });
    }
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
  }

  /** The remembered recipient, or undefined when unknown or older than the TTL (ask again). */
  get(clientId: string, userId: string, eventType: EventType): WebhookRecipient | undefined {
    const key = keyOf(clientId, userId, eventType);
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.until <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.recipient;
  }
}

const keyOf = (clientId: string, userId: string, eventType: string) => `${clientId}\n${userId}\n${eventType}`;
