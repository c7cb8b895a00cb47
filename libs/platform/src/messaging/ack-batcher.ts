/** The part of an amqplib channel the batcher settles messages on. */
export interface AckChannel<M> {
  ack(message: M, allUpTo?: boolean): void;
  nack(message: M, allUpTo?: boolean, requeue?: boolean): void;
}

interface Entry<M> {
  readonly message: M;
  /** pending: the handler runs; done: to be acked; sent: settled with the broker already. */
  state: 'pending' | 'done' | 'sent';
  doneAt: number;
}

/**
 * Settles one consumer channel's messages with as few frames as it can, without holding any ack
 * back for long.
 *
 * Deliveries arrive in delivery-tag order. When every message up to some tag is finished, one
 * `basic.ack` with `multiple` settles them all: under load, handlers finish in batches (they share
 * statements and questions), so one frame settles dozens of messages instead of one frame and one
 * socket write each, which cost the dispatcher and RabbitMQ real CPU.
 *
 * A finished message behind one still running (a partner that takes its whole 5 s) is not held
 * hostage: after `lingerMs` it is acked on its own, so a slow message never keeps the prefetch
 * window full.
 */
export class AckBatcher<M> {
  private entries: Entry<M>[] = [];
  private readonly byMessage = new Map<M, Entry<M>>();
  private scheduled = false;
  private lingerTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly channel: AckChannel<M>,
    private readonly lingerMs = 50,
    private readonly now: () => number = Date.now,
  ) {}

  /** A delivery has arrived (call in delivery order, before its handler can finish). */
  received(message: M): void {
    const entry: Entry<M> = { message, state: 'pending', doneAt: 0 };
    this.entries.push(entry);
    this.byMessage.set(message, entry);
  }

  /** Its handler succeeded: ack it, soon, most likely together with others. */
  ack(message: M): void {
    const entry = this.byMessage.get(message);
    if (!entry || entry.state !== 'pending') return;
    entry.state = 'done';
    entry.doneAt = this.now();
    this.schedule();
  }

  /** Its handler failed: nack it now (requeued or dead-lettered as `requeue` says). */
  nack(message: M, requeue: boolean): void {
    const entry = this.byMessage.get(message);
    if (!entry || entry.state !== 'pending') return;
    entry.state = 'sent';
    this.settle(() => this.channel.nack(message, false, requeue));
    this.schedule();
  }

  /** Sends every finished message's ack now, lingering or not. */
  flush(): void {
    this.send(true);
  }

  /** Messages whose ack has not reached the broker (running, or finished and waiting). */
  get unsettled(): number {
    return this.entries.filter((e) => e.state !== 'sent').length;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.send(false);
    });
  }

  private send(all: boolean): void {
    // The finished run at the front: one frame for all of it.
    let last: Entry<M> | undefined;
    let settled = 0;
    for (const entry of this.entries) {
      if (entry.state === 'pending') break;
      if (entry.state === 'done') last = entry;
      this.byMessage.delete(entry.message);
      settled += 1;
    }
    this.entries = this.entries.slice(settled);
    if (last) {
      const upTo = last.message;
      if (!this.settle(() => this.channel.ack(upTo, true))) return;
    }

    // Finished behind a running message: on their own once they have waited long enough.
    const now = this.now();
    let nextDue = Infinity;
    for (const entry of this.entries) {
      if (entry.state !== 'done') continue;
      const due = entry.doneAt + this.lingerMs;
      if (all || due <= now) {
        entry.state = 'sent';
        if (!this.settle(() => this.channel.ack(entry.message, false))) return;
      } else nextDue = Math.min(nextDue, due);
    }
    clearTimeout(this.lingerTimer);
    this.lingerTimer = undefined;
    if (nextDue !== Infinity)
      this.lingerTimer = setTimeout(() => this.send(false), Math.max(1, nextDue - now)).unref();
  }

  /** False when the channel is gone: everything held is dropped (the broker redelivers it). */
  private settle(frame: () => void): boolean {
    try {
      frame();
      return true;
    } catch {
      this.entries = [];
      this.byMessage.clear();
      clearTimeout(this.lingerTimer);
      return false;
    }
  }
}
