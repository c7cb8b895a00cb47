import type { ServiceEvent, WebhookRecipient, WebhookRecipientsBatchRequest } from '@svc/contracts';
import type { AmqpConnection, RpcClient } from '@svc/platform';
import type { Logger } from 'pino';
import type { WebhookDispatcherConfig } from '../config';
import type {
  AttemptClaim,
  AttemptRecord,
  DeliveriesRepository,
  Delivery,
  NewDelivery,
} from './deliveries.repository';
import { DeliveriesService } from './deliveries.service';
import type { WebhookOutcome, WebhookRequest, WebhookSender } from './webhook-sender';

const config = {
  WEBHOOK_RETRY_SCHEDULE: [60_000, 300_000],
  WEBHOOK_TIMEOUT_MS: 5000,
  WEBHOOK_GIVE_UP_AFTER: 86_400_000,
  WEBHOOK_PARTNER_CONCURRENCY: 64,
} as unknown as WebhookDispatcherConfig;
const logger = {
  info: () => undefined,
  child(): Logger {
    return this as unknown as Logger;
  },
} as unknown as Logger;

const event: ServiceEvent = {
  id: 'evt_1',
  type: 'user.profile.updated',
  user_id: 'usr_1',
  created_at: '2026-01-01T00:00:00.000Z',
};

function setup(options: {
  recipients: { readonly recipients: WebhookRecipient[] };
  outcome?: WebhookOutcome;
  existing?: Delivery;
  cacheTtlMs?: number;
  /** How long the partner takes to answer. */
  postDelayMs?: number;
  /** Whom auth-server names for one question (default: every recipient of `recipients`). */
  answer?: (question: WebhookRecipientsBatchRequest['questions'][number]) => string[];
  /** The partners with first attempts due in the backlog (default: the stored delivery's, if due). */
  backlogPartners?: string[];
  partnerConcurrency?: number;
}) {
  const steps: string[] = [];
  const published: { queue: string; body: unknown }[] = [];
  const recorded: AttemptRecord[] = [];
  const posted: WebhookRequest[] = [];
  let rpcCalls = 0;
  const questions: WebhookRecipientsBatchRequest['questions'][] = [];
  let stored: Delivery | undefined = options.existing;
  let leaseUntil = 0;
  const created = new Map<string, string[]>();
  const backlogClaims: { clientId: string; count: number }[][] = [];
  const repository = {
    backlogPartners: () =>
      Promise.resolve(
        options.backlogPartners ??
          (stored?.status === 'pending' && stored.attempts === 0 && leaseUntil <= Date.now()
            ? [stored.clientId]
            : []),
      ),
    // The stored delivery, if due, claimed as the database would: under a lease.
    claimBacklog: (take: { clientId: string; count: number }[], _dueAfterMs: number, leaseMs: number) => {
      backlogClaims.push(take);
      const due =
        stored?.status === 'pending' &&
        stored.attempts === 0 &&
        leaseUntil <= Date.now() &&
        take.some((t) => t.clientId === stored?.clientId && t.count > 0);
      if (!due || !stored) return Promise.resolve([]);
      leaseUntil = Date.now() + leaseMs;
      return Promise.resolve([stored]);
    },
    createForEvent: (id: string, rows: readonly NewDelivery[]) => {
      created.set(
        id,
        rows.map((r) => r.clientId),
      );
      stored ??= rows[0] && {
        ...rows[0],
        status: 'pending',
        attempts: 0,
        firstAttemptAt: null,
      };
      return Promise.resolve(stored && stored.attempts === 0 ? [stored] : []);
    },
    findById: () => Promise.resolve(stored ?? null),
    // The lease as the database keeps it, for the one delivery of these specs.
    claimAttempt: (_id: string, attempt: number, leaseMs: number): Promise<AttemptClaim> => {
      if (!stored || stored.status !== 'pending' || stored.attempts !== attempt - 1)
        return Promise.resolve('done');
      if (leaseUntil > Date.now()) return Promise.resolve('busy');
      leaseUntil = Date.now() + leaseMs;
      return Promise.resolve('claimed');
    },
    recordAttempt: (r: AttemptRecord) => {
      steps.push(`record ${r.attempt}`);
      recorded.push(r);
      leaseUntil = 0;
      if (stored) stored = { ...stored, attempts: r.attempt, status: r.status };
      return Promise.resolve({ counted: true, endpointDisabled: false });
    },
  } as unknown as DeliveriesRepository;
  // auth-server's batch answer: every question gets the recipients of the options.
  const rpc = {
    call: (_contract: unknown, payload: WebhookRecipientsBatchRequest) => {
      rpcCalls += 1;
      questions.push(payload.questions);
      const ids = options.recipients.recipients.map((r) => r.client_id);
      return Promise.resolve({
        partners: options.recipients.recipients,
        answers: payload.questions.map((q) => ({ client_ids: options.answer?.(q) ?? ids })),
      });
    },
  } as unknown as RpcClient;
  const amqp = {
    publish: (_x: string, queue: string, content: Buffer) => {
      const body = JSON.parse(content.toString()) as { attempt: number };
      steps.push(`queue ${body.attempt}`);
      published.push({ queue, body });
      return Promise.resolve();
    },
  } as unknown as AmqpConnection;
  const sender = {
    post: async (r: WebhookRequest) => {
      steps.push(`post ${r.headers['x-svc-delivery-attempt']}`);
      posted.push(r);
      if (options.postDelayMs) await new Promise((resolve) => setTimeout(resolve, options.postDelayMs));
      return options.outcome ?? { ok: true, statusCode: 204, error: null };
    },
  } as unknown as WebhookSender;
  const service = new DeliveriesService(
    repository,
    rpc,
    amqp,
    sender,
    {
      ...config,
      WEBHOOK_RECIPIENT_CACHE_TTL: options.cacheTtlMs ?? 5000,
      WEBHOOK_PARTNER_CONCURRENCY: options.partnerConcurrency ?? config.WEBHOOK_PARTNER_CONCURRENCY,
    },
    logger,
  );
  return {
    service,
    steps,
    published,
    recorded,
    posted,
    questions,
    created,
    backlogClaims,
    rpcCalls: () => rpcCalls,
    delivery: () => stored,
  };
}

const recipient = { client_id: 'p1', webhook_url: 'https://p1.example/hook', secrets: ['whsec_a'] };

const pendingDelivery = (attempts: number): Delivery => ({
  deliveryId: 'dlv_1',
  eventId: 'evt_1',
  eventType: 'user.profile.updated',
  userId: 'usr_1',
  clientId: 'p1',
  targetUrl: recipient.webhook_url,
  body: '{}',
  status: 'pending',
  attempts,
  firstAttemptAt: attempts > 0 ? new Date() : null,
});

async function waitFor(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 20));
}

describe('DeliveriesService', () => {
  it('asks auth-server once for the events that are fanned out while a question is under way', async () => {
    const s = setup({ recipients: { recipients: [recipient] } });
    const events = Array.from({ length: 12 }, (_, i) => ({ ...event, id: `evt_${i}`, user_id: `usr_${i}` }));
    await Promise.all(events.map((e) => s.service.fanOut(e)));
    // The first question goes out at once; the eleven others wait for it and share the second.
    expect(s.rpcCalls()).toBe(2);
  });

  it('asks a question that several events of a batch share once, and answers each of them', async () => {
    // Only usr_1 has consented to p1.
    const s = setup({
      recipients: { recipients: [recipient] },
      answer: (q) => (q.user_id === 'usr_1' ? ['p1'] : []),
    });
    // Twelve events of three members, fanned out while the first question is under way.
    const events = Array.from({ length: 12 }, (_, i) => ({
      ...event,
      id: `evt_${i}`,
      user_id: `usr_${i % 3}`,
    }));
    await Promise.all(events.map((e) => s.service.fanOut(e)));
    expect(s.questions.map((q) => q.length)).toEqual([1, 3]);
    expect(s.questions[1].map((q) => q.user_id).sort()).toEqual(['usr_0', 'usr_1', 'usr_2']);
    // Each event got the answer to its own member's question.
    for (const e of events) expect(s.created.get(e.id)).toEqual(e.user_id === 'usr_1' ? ['p1'] : []);
  });

  it('fans an event out: one delivery per recipient, first attempt at once with the answer just given', async () => {
    const s = setup({ recipients: { recipients: [recipient] } });
    await s.service.fanOut(event);
    expect(s.delivery()).toMatchObject({
      clientId: 'p1',
      targetUrl: recipient.webhook_url,
      eventId: 'evt_1',
      status: 'delivered',
    });
    expect(s.rpcCalls()).toBe(1);
    expect(s.posted).toHaveLength(1);
    expect(s.posted[0].headers).toMatchObject({
      'x-svc-event-id': 'evt_1',
      'x-svc-delivery-id': s.delivery()?.deliveryId,
      'x-svc-delivery-attempt': '1',
    });
    expect(s.recorded[0]).toMatchObject({
      attempt: 1,
      statusCode: 204,
      status: 'delivered',
      nextAttemptAt: null,
    });
    // Nothing travels through the delivery queue when the first attempt succeeds.
    expect(s.published).toEqual([]);
  });

  it('records a webhook.test delivery under the id the partner was already given, with the usual body', async () => {
    const s = setup({ recipients: { recipients: [recipient] } });
    await s.service.fanOut({ ...event, type: 'webhook.test', client_id: 'p1', delivery_id: 'dlv_announced' });
    expect(s.delivery()).toMatchObject({
      deliveryId: 'dlv_announced',
      clientId: 'p1',
      eventType: 'webhook.test',
    });
    expect(JSON.parse(s.delivery()!.body)).toEqual({
      created_at: event.created_at,
      id: 'evt_1',
      type: 'webhook.test',
      user_id: 'usr_1',
    });
  });

  it('queues the next attempt on the retry queue of its delay after a failure, before recording the failure', async () => {
    const s = setup({
      recipients: { recipients: [recipient] },
      outcome: { ok: false, statusCode: 500, error: 'HTTP 500' },
    });
    await s.service.fanOut(event);
    expect(s.posted[0].headers['x-svc-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(s.recorded[0]).toMatchObject({ attempt: 1, statusCode: 500, status: 'pending' });
    expect(s.published).toEqual([
      { queue: 'webhooks.retry.60000', body: { delivery_id: s.delivery()!.deliveryId, attempt: 2 } },
    ]);
    // A crash after the record would have lost the retry; one before it repeats the attempt.
    expect(s.steps).toEqual(['post 1', 'queue 2', 'record 1']);
  });

  it('ends a delivery at once when the partner no longer receives webhooks', async () => {
    const none = setup({ recipients: { recipients: [] }, existing: pendingDelivery(0) });
    await none.service.attempt({ delivery_id: 'dlv_1', attempt: 1 });
    expect(none.posted).toHaveLength(0);
    expect(none.recorded[0]).toMatchObject({
      status: 'failed',
      nextAttemptAt: null,
      giveUpReason: 'not_a_recipient',
      // Nothing went out: the endpoint's health is not judged on it.
      reached: false,
    });
    expect(none.published).toHaveLength(0);
  });

  it('gives a delivery up at once, reason gone, when the receiver answers 410 (no retry queued)', async () => {
    const s = setup({
      recipients: { recipients: [recipient] },
      outcome: { ok: false, statusCode: 410, error: 'HTTP 410', responseBody: 'gone for good' },
    });
    await s.service.fanOut(event);
    expect(s.recorded[0]).toMatchObject({
      attempt: 1,
      statusCode: 410,
      status: 'failed',
      giveUpReason: 'gone',
      nextAttemptAt: null,
      responseBody: 'gone for good',
      reached: true,
      ok: false,
    });
    expect(s.published).toEqual([]);
  });

  it('gives up with reason attempts_exhausted when the schedule runs out', async () => {
    const s = setup({
      recipients: { recipients: [recipient] },
      outcome: { ok: false, statusCode: 500, error: 'HTTP 500' },
      existing: pendingDelivery(2),
    });
    await s.service.attempt({ delivery_id: 'dlv_1', attempt: 3 });
    expect(s.recorded[0]).toMatchObject({ status: 'failed', giveUpReason: 'attempts_exhausted' });
  });

  it('sends a retry to the URL the partner has registered now, and records where it went', async () => {
    const moved = { ...recipient, webhook_url: 'https://p1.example/new-hook' };
    const s = setup({ recipients: { recipients: [moved] }, existing: pendingDelivery(1) });
    await s.service.attempt({ delivery_id: 'dlv_1', attempt: 2 });
    expect(s.posted.map((p) => p.url)).toEqual(['https://p1.example/new-hook']);
    expect(s.recorded[0]).toMatchObject({
      attempt: 2,
      targetUrl: 'https://p1.example/new-hook',
      status: 'delivered',
    });
  });

  it('ignores a duplicate message of an attempt already recorded', async () => {
    const s = setup({ recipients: { recipients: [recipient] }, existing: pendingDelivery(2) });
    await s.service.attempt({ delivery_id: 'dlv_1', attempt: 2 });
    expect(s.posted).toHaveLength(0);
    expect(s.recorded).toHaveLength(0);
  });

  it('sends an attempt once when a second copy of its event is fanned out while the first runs', async () => {
    const s = setup({ recipients: { recipients: [recipient] }, postDelayMs: 300 });
    // The event message handed out again (a connection lost before its ack) while its fan-out runs.
    await Promise.all([s.service.fanOut(event), s.service.fanOut(event)]);
    await waitFor(() => s.recorded.length > 0);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(s.posted).toHaveLength(1);
    expect(s.recorded.map((r) => r.attempt)).toEqual([1]);
  });

  it('lets a first attempt outlive the event’s wait under its lease: the backlog does not send it again', async () => {
    const s = setup({ recipients: { recipients: [recipient] }, postDelayMs: 1500 });
    // The first attempt outlives FIRST_ATTEMPT_HOLD_MS: the event is acked, nothing is queued.
    await s.service.fanOut(event);
    expect(s.published).toEqual([]);
    await Promise.all(await s.service.startBacklogAttempts(10));
    await waitFor(() => s.recorded.length > 0);
    expect(s.posted).toHaveLength(1);
    expect(s.recorded.map((r) => r.attempt)).toEqual([1]);
  });

  it('claims backlog attempts with the slots it took first, never more than a partner has free', async () => {
    const s = setup({ recipients: { recipients: [recipient] }, existing: pendingDelivery(0) });
    const started = await s.service.startBacklogAttempts(400);
    expect(s.backlogClaims).toEqual([[{ clientId: 'p1', count: 64 }]]);
    await Promise.all(started);
    expect(s.posted).toHaveLength(1);
    expect(s.recorded.map((r) => r.attempt)).toEqual([1]);
    // Done: the next round finds nothing due.
    expect(await s.service.startBacklogAttempts(400)).toEqual([]);
  });

  it('shares a round’s attempts between partners a slot at a time, a different one first each round', async () => {
    const s = setup({ recipients: { recipients: [recipient] }, backlogPartners: ['a', 'b', 'c'] });
    await Promise.all(await s.service.startBacklogAttempts(4));
    await Promise.all(await s.service.startBacklogAttempts(4));
    expect(s.backlogClaims).toEqual([
      [
        { clientId: 'a', count: 2 },
        { clientId: 'b', count: 1 },
        { clientId: 'c', count: 1 },
      ],
      [
        { clientId: 'b', count: 2 },
        { clientId: 'c', count: 1 },
        { clientId: 'a', count: 1 },
      ],
    ]);
  });

  it('runs an attempt whose lease ran out (the run that held it died)', async () => {
    const s = setup({ recipients: { recipients: [recipient] }, existing: pendingDelivery(0) });
    const repository = (s.service as unknown as { deliveries: DeliveriesRepository }).deliveries;
    // A run that claimed attempt 1 with a short lease and never recorded it.
    expect(await repository.claimAttempt('dlv_1', 1, 300)).toBe('claimed');
    await s.service.attempt({ delivery_id: 'dlv_1', attempt: 1 });
    expect(s.posted).toHaveLength(1);
    expect(s.recorded.map((r) => r.attempt)).toEqual([1]);
  });

  it('lets a retry reuse auth-server’s answer within the cache TTL (per partner, member and event type)', async () => {
    const s = setup({
      recipients: { recipients: [recipient] },
      outcome: { ok: false, statusCode: 503, error: 'HTTP 503' },
      existing: pendingDelivery(1),
    });
    await s.service.attempt({ delivery_id: 'dlv_1', attempt: 2 });
    await s.service.attempt({ delivery_id: 'dlv_1', attempt: 3 });
    expect(s.posted.map((p) => p.headers['x-svc-delivery-attempt'])).toEqual(['2', '3']);
    expect(s.rpcCalls()).toBe(1);
  });

  it('asks auth-server on every retry with a TTL of 0', async () => {
    const s = setup({
      recipients: { recipients: [recipient] },
      outcome: { ok: false, statusCode: 503, error: 'HTTP 503' },
      existing: pendingDelivery(1),
      cacheTtlMs: 0,
    });
    await s.service.attempt({ delivery_id: 'dlv_1', attempt: 2 });
    await s.service.attempt({ delivery_id: 'dlv_1', attempt: 3 });
    expect(s.rpcCalls()).toBe(2);
  });
});
