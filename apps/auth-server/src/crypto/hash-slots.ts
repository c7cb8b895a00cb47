import { DependencyUnavailableError } from '@svc/platform';

/**
 * At most `running` password hashes at once, and at most `waiting` more queued; beyond that the
 * caller is told at once that sign-in is busy (503), rather than joining a queue that would push
 * everyone past the RPC timeout.
 *
 * scrypt runs on libuv's thread pool (4 threads by default), which the PostgreSQL driver also
 * needs to open a connection (SCRAM key derivation). Unbounded, a burst of sign-ins filled every
 * thread, new database connections waited past the pool's connect timeout, and sign-in answered
 * 500 (seen under a burst of 10 parallel sign-ins on a loaded 2-core machine).
 */
export class HashSlots {
  private active = 0;
  private readonly queue: (() => void)[] = [];

  constructor(
    private readonly running: number,
    private readonly waiting: number,
  ) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.active >= this.running) {
      if (this.queue.length >= this.waiting) {
        throw new DependencyUnavailableError('password-hashing', new Error('too many sign-ins at once'));
      }
      await new Promise<void>((resolve) => this.queue.push(resolve));
    } else {
      this.active += 1;
    }
    try {
      return await work();
    } finally {
      const next = this.queue.shift();
      // The slot passes straight to the next caller, so `active` stays as it is.
      if (next) next();
      else this.active -= 1;
    }
  }
}
