/**
 * At most `limit` tasks at once; the rest wait in arrival order. A consumer whose messages may
 * each carry many events (a packed message on `crew.events`) bounds the events it works on with
 * this, where its prefetch can only bound messages.
 */
export class Permits {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError('Permits needs a limit of at least 1');
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active < this.limit) this.active += 1;
    // A permit is handed over by the task that ends, so `active` already counts this one.
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active -= 1;
    }
  }
}
