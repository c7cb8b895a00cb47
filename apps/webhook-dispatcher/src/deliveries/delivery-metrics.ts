import { AppMetrics, type AmqpConnection } from '@svc/platform';
import type { Counter, Histogram } from 'prom-client';
import { parkingQueue, retryQueue, DELIVERIES_QUEUE, EVENTS_QUEUE } from './webhook-queues';

/** How an attempt ended: delivered, a retry queued, or the delivery given up (no attempt left). */
export type AttemptOutcome = 'delivered' | 'retry' | 'given_up';
const ATTEMPT_OUTCOMES: readonly AttemptOutcome[] = ['delivered', 'retry', 'given_up'];

/** A dead broker must not stall the scrape: past this the depths read NaN. */
const QUEUE_DEPTH_BUDGET_MS = 500;

/**
 * The dispatcher's metrics: `webhook_attempts_total{outcome}`, `webhook_attempt_duration_seconds
 * {outcome}` (the POST to the partner's endpoint) and `webhook_retry_queue_messages{queue}`, the
 * messages waiting out a delay in each retry queue and parking queue, read from RabbitMQ at scrape
 * time, and `webhook_endpoints_disabled_total`. Queue names come from the retry schedule, so the
 * label is bounded by configuration.
 */
export class DeliveryMetrics {
  private readonly attempts: Counter<'outcome'>;
  private readonly duration: Histogram<'outcome'>;
  private readonly disabled: Counter;

  constructor(metrics: AppMetrics, amqp: AmqpConnection, retryDelays: readonly number[]) {
    this.attempts = metrics.counter(
      'webhook_attempts_total',
      'delivery attempts by outcome: delivered, retry (queued again) or given_up (no attempt left)',
      ['outcome'],
    );
    this.duration = metrics.histogram(
      'webhook_attempt_duration_seconds',
      'duration of the HTTP attempt to the partner endpoint, by outcome (delivered, retry, given_up)',
      ['outcome'],
    );
    this.disabled = metrics.counter(
      'webhook_endpoints_disabled_total',
      'partner endpoints disabled after failing every attempt for WEBHOOK_DISABLE_AFTER (the log line names the partner)',
    );
    AppMetrics.preset(this.attempts, { outcome: ATTEMPT_OUTCOMES });
    AppMetrics.preset(this.duration, { outcome: ATTEMPT_OUTCOMES });
    const queues = [
      ...retryDelays.map((delay) => retryQueue(delay)),
      parkingQueue(EVENTS_QUEUE),
      parkingQueue(DELIVERIES_QUEUE),
    ];
    metrics.gauge(
      'webhook_retry_queue_messages',
      'messages waiting out a delay in each retry and parking queue (NaN while RabbitMQ does not answer)',
      async (gauge) => {
        const depths = await amqp.queueDepths(queues, QUEUE_DEPTH_BUDGET_MS).catch(() => undefined);
        for (const queue of queues) gauge.set({ queue }, depths?.get(queue) ?? Number.NaN);
      },
      ['queue'],
    );
  }

  endpointDisabled(): void {
    this.disabled.inc();
  }

  /** `seconds`: the POST's duration; undefined when no request went out. */
  attempted(outcome: AttemptOutcome, seconds: number | undefined): void {
    this.attempts.inc({ outcome });
    if (seconds !== undefined) this.duration.observe({ outcome }, seconds);
  }
}
