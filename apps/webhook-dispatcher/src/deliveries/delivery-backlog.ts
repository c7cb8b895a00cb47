import {
  Inject,
  Injectable,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { APP_CONFIG, APP_LOGGER } from '@svc/platform';
import type { Logger } from 'pino';
import type { WebhookDispatcherConfig } from '../config';
import { DeliveriesService } from './deliveries.service';

/** How often the backlog looks for due attempts when no attempt of its own ended sooner. */
const BACKLOG_POLL_MS = 500;
/** Rounds come at most this often: attempts ending together share the next round. */
const BACKLOG_ROUND_GAP_MS = 25;
/** After a failed round (the database unreachable), the next comes this much later. */
const BACKLOG_RETRY_MS = 5000;

/**
 * The backlog: first attempts that wait for their partner's turn (partners' replays and
 * redeliveries, and first attempts the fan-out found no slot for). It is the delivery rows
 * themselves, pending without an attempt, not a queue: every replica claims the due ones in rounds
 * (DeliveriesService.startBacklogAttempts), one partner's slot at a time, under each attempt's
 * lease, so one partner's 10,000 replays never stand in front of another partner's redelivery.
 * Why rows and not a queue: docs/architecture.md (the backlog); and a queue per partner would be
 * thousands of queues and consumers to declare and remove.
 *
 * A round starts after BACKLOG_POLL_MS, or sooner (BACKLOG_ROUND_GAP_MS apart) once one of the
 * backlog's own attempts ends, which frees a slot of a partner that may have more due. At most
 * WEBHOOK_CONCURRENCY backlog attempts run at once in a process.
 */
@Injectable()
export class DeliveryBacklog implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly running = new Set<Promise<void>>();
  private stopped = false;
  private woken = false;
  private wake?: () => void;
  private loop?: Promise<void>;

  constructor(
    private readonly deliveries: DeliveriesService,
    @Inject(APP_CONFIG) private readonly config: Pick<WebhookDispatcherConfig, 'WEBHOOK_CONCURRENCY'>,
    @Inject(APP_LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    this.loop ??= this.rounds();
  }

  /** Stops claiming, and lets the attempts this process claimed finish (each within its budget). */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
    await Promise.all(this.running);
  }

  private async rounds(): Promise<void> {
    while (!this.stopped) {
      const started = Date.now();
      let wait = BACKLOG_POLL_MS;
      try {
        const attempts = await this.deliveries.startBacklogAttempts(
          this.config.WEBHOOK_CONCURRENCY - this.running.size,
        );
        for (const attempt of attempts) {
          this.running.add(attempt);
          void attempt.finally(() => {
            this.running.delete(attempt);
            this.woken = true;
            this.wake?.();
          });
        }
      } catch (err) {
        wait = BACKLOG_RETRY_MS;
        this.logger.warn(
          { err: err instanceof Error ? err.message : String(err) },
          `webhook backlog round failed; the next one comes in ${BACKLOG_RETRY_MS / 1000} s`,
        );
      }
      const gap = BACKLOG_ROUND_GAP_MS - (Date.now() - started);
      if (gap > 0) await sleep(gap);
      await this.idle(wait);
    }
  }

  /** Until one of the backlog's attempts ends (or has ended since the last round), or `ms`. */
  private idle(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wake = undefined;
        this.woken = false;
        resolve();
      };
      const timer = setTimeout(done, this.woken || this.stopped ? 0 : ms);
      this.wake = done;
    });
  }
}
