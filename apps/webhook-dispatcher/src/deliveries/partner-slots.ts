/** Gives back a slot taken with PartnerSlots.take. */
export type Release = () => void;

/**
 * At most `perPartner` of one partner's attempts (or lookups) at once in this process
 * (WEBHOOK_PARTNER_CONCURRENCY for attempts).
 *
 * Why: every consumer of the dispatcher is shared by all partners, and an attempt holds its
 * permit until the partner answers, up to the 5 s budget. Without a cap, a partner whose endpoint
 * hangs fills every permit with attempts that wait 5 s each, and every other partner's events queue
 * behind them. With it, that partner holds at most `perPartner` slots, and what it cannot start
 * waits here or in the backlog (DeliveryBacklog), not in front of anyone else (docs/architecture.md,
 * fairness between partners). A per-partner cap in each process is the simplest rule that bounds one partner's share without
 * knowing the others: no coordination between replicas, nothing to tune per partner.
 */
export class PartnerSlots {
  private readonly running = new Map<string, number>();
  private readonly queues = new Map<string, ((release: Release) => void)[]>();

  constructor(private readonly perPartner: number) {
    if (!Number.isInteger(perPartner) || perPartner < 1)
      throw new RangeError('PartnerSlots needs a cap of at least 1');
  }

  /** A slot of `clientId` if one is free now (nobody waits while one is free). */
  tryTake(clientId: string): Release | undefined {
    const running = this.running.get(clientId) ?? 0;
    if (running >= this.perPartner) return undefined;
    this.running.set(clientId, running + 1);
    return this.releaser(clientId);
  }

  /**
   * A slot of `clientId`: at once when it has one free, else when one is given back, in the order
   * asked. With `maxWaitMs`, undefined when none came in that time (the caller does not wait longer).
   */
  take(clientId: string, maxWaitMs?: number): Promise<Release | undefined> {
    const free = this.tryTake(clientId);
    if (free || maxWaitMs === 0) return Promise.resolve(free);
    return new Promise((resolve) => {
      const queue = this.queues.get(clientId) ?? [];
      let timer: NodeJS.Timeout | undefined;
      const grant = (release: Release) => {
        clearTimeout(timer);
        resolve(release);
      };
      queue.push(grant);
      this.queues.set(clientId, queue);
      if (maxWaitMs !== undefined) {
        timer = setTimeout(() => {
          const i = queue.indexOf(grant);
          if (i !== -1) queue.splice(i, 1);
          if (queue.length === 0 && this.queues.get(clientId) === queue) this.queues.delete(clientId);
          resolve(undefined);
        }, maxWaitMs);
      }
    });
  }

  /** Takers of `clientId` waiting for a slot now. */
  waiting(clientId: string): number {
    return this.queues.get(clientId)?.length ?? 0;
  }

  /** Slots of `clientId` in use now (for tests and metrics). */
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
      if (next) next(this.releaser(clientId));
      else {
        const running = (this.running.get(clientId) ?? 1) - 1;
        if (running === 0) this.running.delete(clientId);
        else this.running.set(clientId, running);
      }
    };
  }
}
