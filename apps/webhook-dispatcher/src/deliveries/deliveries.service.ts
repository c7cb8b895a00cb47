import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable, Optional } from '@nestjs/common';
import {
  AUTH_WEBHOOK_RECIPIENTS_BATCH,
  recipientsOfBatch,
  type EventType,
  type ServiceEvent,
  type WebhookRecipient,
  type WebhookRecipientsRequest,
} from '@svc/contracts';
import {
  AmqpConnection,
  APP_CONFIG,
  APP_LOGGER,
  AppMetrics,
  RpcClient,
  GroupBatcher,
  inSpan,
  markSpanError,
  newId,
  SpanKind,
  type Span,
} from '@svc/platform';
import type { Logger } from 'pino';
import type { WebhookDispatcherConfig } from '../config';
import {
  DeliveriesRepository,
  type AttemptRecord,
  type AttemptRecorded,
  type Delivery,
  type GiveUpReason,
} from './deliveries.repository';
import { NOT_A_RECIPIENT_ERROR } from './delivery.entity';
import { enqueueAttempt, type DeliveryMessage } from './delivery-message';
import { RecipientCache } from './recipient-cache';
import { DeliveryMetrics, type AttemptOutcome } from './delivery-metrics';
import { nextAttemptAt, retryDelays, type RetryPolicy } from './retry-policy';
import { PartnerSlots, type Release } from './partner-slots';
import { retryQueue } from './webhook-queues';
import { WebhookSender, type WebhookOutcome } from './webhook-sender';
import { attemptHeaders, canonicalBody } from './webhook-signature';

/**
 * How long an event waits for one of its first attempts (a slot, then the answer) before the event
 * is acknowledged: far longer than a healthy endpoint's answer, far shorter than a hanging one's
 * 5 s (firstAttempt).
 */
const FIRST_ATTEMPT_HOLD_MS = 1000;

/**
 * When a first attempt nobody has claimed becomes the backlog's (DeliveryBacklog), counted from
 * its delivery's creation: the fan-out that created it has claimed it or given it up by then
 * (FIRST_ATTEMPT_HOLD_MS, and a second for its claim to land).
 */
const BACKLOG_AFTER_MS = 2 * FIRST_ATTEMPT_HOLD_MS;

/**
 * How long an attempt's lease outlives its request budget (WEBHOOK_TIMEOUT_MS): time to queue the
 * retry and record the attempt. A run that dies holds its attempt back this much longer than the
 * budget; a run slower than both may let a second run send the attempt again (at least once).
 */
const LEASE_MARGIN_MS = 5000;

/** How often a run waiting for another run's attempt looks again: most end well before their lease. */
const LEASE_POLL_MS = 1000;

/**
 * Fans an event out to the partners auth-server names, and runs delivery attempts. Every step is
 * written down before its message is acked, so a crash repeats work (at least once) but never
 * loses it; duplicates carry the same event id.
 */
@Injectable()
export class DeliveriesService {
  readonly retryPolicy: RetryPolicy;
  private readonly recipientCache: RecipientCache;
  private readonly metrics?: DeliveryMetrics;
  private readonly attemptLog: Logger;
  private readonly slots: PartnerSlots;

  constructor(
    private readonly deliveries: DeliveriesRepository,
    private readonly rpc: RpcClient,
    private readonly amqp: AmqpConnection,
    private readonly sender: WebhookSender,
    @Inject(APP_CONFIG) private readonly config: WebhookDispatcherConfig,
    @Inject(APP_LOGGER) logger: Logger,
    @Optional() metrics?: AppMetrics,
  ) {
    this.retryPolicy = {
      schedule: config.WEBHOOK_RETRY_SCHEDULE,
      giveUpAfterMs: config.WEBHOOK_GIVE_UP_AFTER,
    };
    this.metrics = metrics && new DeliveryMetrics(metrics, amqp, retryDelays(this.retryPolicy));
    this.recipientCache = new RecipientCache(config.WEBHOOK_RECIPIENT_CACHE_TTL);
    this.slots = new PartnerSlots(config.WEBHOOK_PARTNER_CONCURRENCY);
    // One line per attempt, of ids, numbers and our own error text (never a secret, a body or a
    // header): it skips the redaction pass, which cost more than the rest of the line.
    this.attemptLog = logger.child({}, { redact: [] });
  }

  /**
   * auth-server's answers, asked for many events at once: the events and attempts that need one
   * while a question is under way share the next (one message each way, one statement there).
   * The same question twice in a batch (one member's events fanned out together) is asked once:
   * both get the same answer of the same moment. A full batch (the batcher's 200 questions) is a
   * message of some tens of KiB.
   */
  private readonly recipientQuestions = new GroupBatcher<WebhookRecipientsRequest, WebhookRecipient[]>(
    async (questions) => {
      const slot = new Map<string, number>();
      const distinct: WebhookRecipientsRequest[] = [];
      const slots = questions.map((q) => {
        const key = `${q.user_id}\n${q.event_type}\n${q.client_id ?? ''}`;
        let i = slot.get(key);
        if (i === undefined) {
          i = distinct.push(q) - 1;
          slot.set(key, i);
        }
        return i;
      });
      const answers = recipientsOfBatch(
        distinct,
        await this.rpc.call(AUTH_WEBHOOK_RECIPIENTS_BATCH, { questions: distinct }),
      );
      return slots.map((i) => answers[i]);
    },
  );

  /**
   * One delivery per recipient (idempotent per event and partner), and its first attempt, here and
   * now, with the answer auth-server just gave: only retries travel through the delivery queue. The
   * event is acked once every first attempt is recorded, running under its lease, or left to the
   * backlog (firstAttempt): the delivery rows are written first, so whatever happens next, the
   * backlog finds each attempt that was not made.
   */
  async fanOut(event: ServiceEvent): Promise<void> {
    // Always asked, never cached: a consent revoked a moment ago stops this event.
    const recipients = await this.recipientQuestions.submit({
      user_id: event.user_id,
      event_type: event.type,
      ...(event.client_id === undefined ? {} : { client_id: event.client_id }),
    });
    this.recipientCache.remember(event.user_id, event.type, recipients);
    const body = canonicalBody(event);
    const pending = await this.deliveries.createForEvent(
      event.id,
      recipients.map((r) => ({
        // A test event names its delivery: the partner was already told its id.
        deliveryId:
          event.delivery_id !== undefined && r.client_id === event.client_id
            ? event.delivery_id
            : newId('dlv', 16),
        eventId: event.id,
        eventType: event.type,
        userId: event.user_id,
        clientId: r.client_id,
        targetUrl: r.webhook_url,
        body,
      })),
    );
    const recipientOf = (d: Delivery) => recipients.find((r) => r.client_id === d.clientId);
    await Promise.all(pending.map((d) => this.firstAttempt(d, recipientOf(d))));
  }

  /**
   * A first attempt, run here if its partner has a slot within FIRST_ATTEMPT_HOLD_MS. The event
   * waits for it at most that long, slot and answer together, so that a partner whose endpoint
   * hangs holds neither the event nor the permits its other partners need. An attempt that got no
   * slot in time is left to the backlog (its delivery row is the backlog's entry, so nothing is
   * queued and nothing can be lost); so is every first attempt of a partner that already has a
   * slot's worth waiting here: what waits in memory is bounded. One still running after the hold
   * goes on under its lease; should this process die, the backlog runs it once the lease runs out.
   */
  private async firstAttempt(delivery: Delivery, recipient: WebhookRecipient | undefined): Promise<void> {
    if (this.slots.waiting(delivery.clientId) >= this.config.WEBHOOK_PARTNER_CONCURRENCY) return;
    const heldUntil = Date.now() + FIRST_ATTEMPT_HOLD_MS;
    const release = await this.slots.take(delivery.clientId, FIRST_ATTEMPT_HOLD_MS);
    if (!release) return;
    const running = this.run(delivery, 1, recipient).finally(release);
    let timer: NodeJS.Timeout | undefined;
    const held = new Promise<'held'>((resolve) => {
      timer = setTimeout(() => resolve('held'), Math.max(0, heldUntil - Date.now()));
    });
    const first = await Promise.race([running.then(() => 'done' as const), held]).finally(() =>
      clearTimeout(timer),
    );
    if (first === 'done') return;
    running.catch((err: unknown) =>
      this.attemptLog.warn(
        { delivery_id: delivery.deliveryId, client_id: delivery.clientId, err },
        'first attempt failed after its event was acknowledged: the backlog runs it once its lease runs out',
      ),
    );
  }

  /** Runs the retry a delivery-queue message asks for, unless it ran, once its partner has a slot. */
  async attempt(message: DeliveryMessage): Promise<void> {
    const delivery = await this.deliveries.findById(message.delivery_id);
    // Already recorded (a duplicate message) or finished: nothing to do.
    if (!delivery || delivery.status !== 'pending' || delivery.attempts !== message.attempt - 1) return;
    const release = await this.slots.take(delivery.clientId);
    try {
      await this.run(delivery, message.attempt, await this.recipientOf(delivery));
    } finally {
      release?.();
    }
  }

  /**
   * One round of the backlog (DeliveryBacklog): claims first attempts that are due, at most `max`
   * in all and never more of a partner than it has free slots here, and starts them. The slots are
   * taken before the claim, one per partner in turn (a different partner first each round), so a
   * claimed attempt never waits for one under its lease, and a partner with thousands due gets the
   * same turn as a partner with one. Returns the attempts started; each settles when it is done
   * (never rejecting: a failed one is logged, and runs again once its lease runs out).
   */
  async startBacklogAttempts(max: number): Promise<Promise<void>[]> {
    if (max <= 0) return [];
    const partners = await this.deliveries.backlogPartners(BACKLOG_AFTER_MS);
    const first = partners.length === 0 ? 0 : this.backlogRounds++ % partners.length;
    const turns = [...partners.slice(first), ...partners.slice(0, first)];
    const reserved = new Map<string, Release[]>();
    for (let total = 0, more = true; more && total < max;) {
      more = false;
      for (const clientId of turns) {
        if (total >= max) break;
        const release = this.slots.tryTake(clientId);
        if (!release) continue;
        reserved.set(clientId, [...(reserved.get(clientId) ?? []), release]);
        total += 1;
        more = true;
      }
    }
    if (reserved.size === 0) return [];
    const releaseRest = () => [...reserved.values()].forEach((rest) => rest.forEach((r) => r()));
    let claimed: Delivery[];
    try {
      claimed = await this.deliveries.claimBacklog(
        [...reserved].map(([clientId, slots]) => ({ clientId, count: slots.length })),
        BACKLOG_AFTER_MS,
        this.leaseMs,
      );
    } catch (err) {
      releaseRest();
      throw err;
    }
    const deadline = Date.now() + this.config.WEBHOOK_TIMEOUT_MS;
    const started = claimed.map((delivery) => {
      const release = reserved.get(delivery.clientId)?.pop();
      return this.runFromBacklog(delivery, deadline).finally(() => release?.());
    });
    releaseRest();
    return started;
  }

  private backlogRounds = 0;

  /** A claimed first attempt of the backlog: its recipient is asked within the attempt's budget. */
  private async runFromBacklog(delivery: Delivery, deadline: number): Promise<void> {
    try {
      await this.runClaimed(delivery, 1, await this.recipientOf(delivery), deadline);
    } catch (err) {
      this.attemptLog.warn(
        { delivery_id: delivery.deliveryId, client_id: delivery.clientId, err },
        'backlog attempt failed: it runs again once its lease runs out',
      );
    }
  }

  /**
   * An attempt's lease: its request budget and the time to record it. The budget is counted from
   * the claim (the deadline runClaimed gets), so the lease always outlasts the attempt.
   */
  private get leaseMs(): number {
    return this.config.WEBHOOK_TIMEOUT_MS + LEASE_MARGIN_MS;
  }

  /**
   * Runs an attempt once its lease is ours. While another run holds it, waits for that run's
   * outcome: recorded (nothing left to do here) or its lease run out (it died: this run sends it).
   */
  private async run(
    delivery: Delivery,
    attempt: number,
    recipient: WebhookRecipient | undefined,
  ): Promise<void> {
    for (;;) {
      const claim = await this.deliveries.claimAttempt(delivery.deliveryId, attempt, this.leaseMs);
      if (claim === 'done') return;
      if (claim === 'claimed')
        return this.runClaimed(delivery, attempt, recipient, Date.now() + this.config.WEBHOOK_TIMEOUT_MS);
      await sleep(LEASE_POLL_MS);
    }
  }

  /**
   * One attempt, ours under its lease: POST (DNS, connection and answer) by `deadline`, queue the
   * next one after a failure (if there is one), record it.
   */
  private runClaimed(
    delivery: Delivery,
    attempt: number,
    recipient: WebhookRecipient | undefined,
    deadline: number,
  ): Promise<void> {
    return inSpan(
      'webhook attempt',
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'webhook.delivery_id': delivery.deliveryId,
          'webhook.event_id': delivery.eventId,
          'webhook.client_id': delivery.clientId,
          'webhook.attempt': attempt,
        },
      },
      (span) => this.runAttempt(delivery, attempt, recipient, deadline, span),
    );
  }

  private async runAttempt(
    delivery: Delivery,
    attempt: number,
    recipient: WebhookRecipient | undefined,
    deadline: number,
    span: Span | undefined,
  ): Promise<void> {
    const startedAt = new Date();
    const started = process.hrtime.bigint();
    const outcome = await this.post(delivery, recipient, attempt, deadline);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const durationMs = Date.now() - startedAt.getTime();
    const next =
      outcome.ok || outcome.giveUp
        ? null
        : nextAttemptAt(this.retryPolicy, attempt, delivery.firstAttemptAt ?? startedAt, new Date());
    // The retry is queued before the attempt is recorded: a crash in between repeats this attempt
    // (its message is not acked) but never loses the retry. A retry whose attempt was never
    // recorded finds the delivery behind it and is dropped.
    if (next) {
      await enqueueAttempt(this.amqp, retryQueue(next.delayMs), {
        delivery_id: delivery.deliveryId,
        attempt: attempt + 1,
      });
    }
    const result: AttemptOutcome = outcome.ok ? 'delivered' : next ? 'retry' : 'given_up';
    // Timed only when a request went out: a partner no longer a recipient ends without one.
    this.metrics?.attempted(result, recipient && seconds);
    const recorded = await this.record({
      deliveryId: delivery.deliveryId,
      clientId: delivery.clientId,
      attempt,
      targetUrl: recipient?.webhook_url ?? delivery.targetUrl,
      startedAt,
      durationMs,
      statusCode: outcome.statusCode,
      error: outcome.error,
      nextAttemptAt: next?.at ?? null,
      status: outcome.ok ? 'delivered' : next ? 'pending' : 'failed',
      giveUpReason: outcome.ok || next ? null : (outcome.giveUp ?? 'attempts_exhausted'),
      responseBody: outcome.responseBody ?? null,
      reached: recipient !== undefined,
      ok: outcome.ok,
    });
    this.attemptLog.info(
      {
        delivery_id: delivery.deliveryId,
        event_id: delivery.eventId,
        client_id: delivery.clientId,
        attempt,
        status_code: outcome.statusCode,
        error: outcome.error,
        duration_ms: durationMs,
        next_attempt_at: next?.at.toISOString() ?? null,
        ...(recorded.counted ? {} : { duplicate: true }),
      },
      outcome.ok ? 'webhook delivered' : 'webhook attempt failed',
    );
    if (recorded.endpointDisabled) {
      // What the partner sees as `disabled_reason: failing`; operators hear it here and in the metric.
      this.attemptLog.warn(
        { client_id: delivery.clientId, disable_after_ms: this.config.WEBHOOK_DISABLE_AFTER },
        'webhook endpoint disabled: every attempt failed for WEBHOOK_DISABLE_AFTER; new events are skipped until the partner enables it',
      );
      this.metrics?.endpointDisabled();
    }
    span?.setAttribute('webhook.outcome', result);
    if (outcome.statusCode !== null) span?.setAttribute('http.response.status_code', outcome.statusCode);
    if (result !== 'delivered') markSpanError(span, outcome.error ?? undefined);
  }

  /**
   * Records an attempt that went out. Should its record be refused for what the partner's answer
   * brought (WebhookSender already makes any bytes storable; this is the second line), it is
   * recorded again without the response body: an attempt that is not recorded runs again, and the
   * partner would get the event again for as long as it answers that way. A second refusal (the
   * database is down) throws: the message comes back, as after a crash.
   */
  private async record(attempt: AttemptRecord): Promise<AttemptRecorded> {
    try {
      return await this.deliveries.recordAttempt(attempt);
    } catch (err) {
      if (attempt.responseBody === null) throw err;
      this.attemptLog.warn(
        { delivery_id: attempt.deliveryId, client_id: attempt.clientId, err },
        'attempt could not be recorded with its response body: recorded without it',
      );
      return this.deliveries.recordAttempt({ ...attempt, responseBody: null });
    }
  }

  /**
   * The partner as auth-server sees it now (or within the cache's TTL): its secrets sign the
   * attempt, and its absence ends the delivery. Undefined: no longer a recipient.
   */
  private async recipientOf(delivery: Delivery): Promise<WebhookRecipient | undefined> {
    const eventType = delivery.eventType as EventType;
    const cached = this.recipientCache.get(delivery.clientId, delivery.userId, eventType);
    if (cached) return cached;
    const recipients = await this.recipientQuestions.submit({
      user_id: delivery.userId,
      event_type: eventType,
      client_id: delivery.clientId,
    });
    this.recipientCache.remember(delivery.userId, eventType, recipients);
    return recipients.find((r) => r.client_id === delivery.clientId);
  }

  private async post(
    delivery: Delivery,
    recipient: WebhookRecipient | undefined,
    attempt: number,
    deadline: number,
  ): Promise<WebhookOutcome & { giveUp?: GiveUpReason }> {
    // Every attempt goes to the partner's registered URL as it is now, signed with its current
    // secrets (a change applies within the recipient cache's TTL): once a partner moves its
    // endpoint, the old URL (perhaps no longer theirs) gets nothing more.
    // A partner that lost its consent, its URL or its standing since the event gets nothing more:
    // the attempt is logged and the delivery ends, as no retry can change that.
    if (!recipient) {
      return {
        ok: false,
        statusCode: null,
        error: NOT_A_RECIPIENT_ERROR,
        giveUp: 'not_a_recipient',
      };
    }
    const outcome = await this.sender.post({
      clientId: delivery.clientId,
      url: recipient.webhook_url,
      body: delivery.body,
      timeoutMs: deadline - Date.now(),
      headers: attemptHeaders(
        {
          deliveryId: delivery.deliveryId,
          eventId: delivery.eventId,
          eventType: delivery.eventType,
          attempt,
        },
        recipient,
        delivery.body,
      ),
    });
    // 410 Gone (RFC 9110 §15.5.11): the receiver says this endpoint is gone for good; no retry
    // can change that, so the delivery ends now instead of after the whole schedule.
    return outcome.statusCode === 410 ? { ...outcome, giveUp: 'gone' } : outcome;
  }
}
