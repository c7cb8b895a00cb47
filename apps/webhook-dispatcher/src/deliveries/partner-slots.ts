/** Gives back a slot taken with PartnerSlots.take. */
export type Release = () => void;

/** Who waits for a slot: retries (`retry`) are served before the backlog (replays, overflow). */
export type SlotPriority = 'retry' | 'backlog';

interface Waiter {
  readonly priority: SlotPriority;
  readonly grant: (release: Release) => void;
}

/**
 * At most `perPartner` attempts of one partner at once in this process (WEBHOOK_PARTNER_CONCURRENCY).
 *
 * Why: every consumer of the dispatcher is shared by all partners, and an attempt holds its
 * permit and its message until the partner answers, up to the 5 s budget. Without a cap, a partner
 * whose endpoint hangs while it replays thousands of deliveries fills every permit with attempts
 * that wait 5 s each, and every other partner's events queue behind them. With it, that partner
 * holds at most `perPartner` slots; what it cannot start now waits here (its first attempts, up to
 * a slot's worth) or in the backlog queue (its replays, and the rest of its first attempts), not
 * in front of anyone else.
 * A per-partner cap in each process is the simplest rule that bounds one partner's share without
 * knowing the others: no coordination between replicas, nothing to tune per partner.
 */
export class PartnerSlots {
  private readonly running = new Map<string, number>();
  private readonly queues = new Map<string, Waiter[]>();

  constructor(private readonly perPartner: number) {
    if (!Number.isInteger(perPartner) || perPartner < 1)
      throw new RangeError('PartnerSlots needs a cap of at least 1');
  }

  /**
   * A slot of `clientId`: at once when it has one free, else when one is given back, retries
   * first. With `maxWaitMs`, undefined when none came in that time (the caller does not wait longer).
   */
  take(clientId: string, priority: SlotPriority, maxWaitMs?: number): Promise<Release | undefined> {
    const running = this.running.get(clientId) ?? 0;
    if (running < this.perPartner) {
      this.running.set(clientId, running + 1);
      return Promise.resolve(this.releaser(clientId));
    }
    if (maxWaitMs === 0) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const queue = this.queues.get(clientId) ?? [];
      let timer: NodeJS.Timeout | undefined;
      const waiter: Waiter = {
        priority,
        grant: (release) => {
          clearTimeout(timer);
          resolve(release);
        },
      };
      // Retries go before every backlog waiter, after the retries already waiting.
      const at = priority === 'retry' ? queue.findIndex((w) => w.priority === 'backlog') : -1;
      if (at === -1) queue.push(waiter);
      else queue.splice(at, 0, waiter);
      this.queues.set(clientId, queue);
      if (maxWaitMs !== undefined) {
        timer = setTimeout(() => {
          const i = queue.indexOf(waiter);
          if (i !== -1) queue.splice(i, 1);
          if (queue.length === 0) this.queues.delete(clientId);
          resolve(undefined);
        }, maxWaitMs);
      }
    });
  }

  /** Attempts of `clientId` waiting for a slot now. */
  waiting(clientId: string): number {
    return this.queues.get(clientId)?.length ?? 0;
  }

  /** Attempts of `clientId` running now (for tests and metrics). */
  inUse(clientId: string): number {
    return this.running.get(clientId) ?? 0;
  }

  private releaser(clientId: string): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const queue = this.queues.get(clientId);
      const next = queue?.shift();
      if (queue && queue.length === 0) this.queues.delete(clientId);
      // The slot passes to the next waiter as it is: `running` stays the same.
      if (next) next.grant(this.releaser(clientId));
      else {
        const running = (this.running.get(clientId) ?? 1) - 1;
        if (running === 0) this.running.delete(clientId);
        else this.running.set(clientId, running);
      }
    };
  }
}
