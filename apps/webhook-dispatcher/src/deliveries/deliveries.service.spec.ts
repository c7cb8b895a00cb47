import type { ServiceEvent, WebhookRecipientsResponse } from '@svc/contracts';
import type { AmqpConnection, RpcClient } from '@svc/platform';
import type { Logger } from 'pino';
import type { WebhookDispatcherConfig } from '../config';
import type { AttemptRecord, DeliveriesRepository, Delivery, NewDelivery } from './deliveries.repository';
import { DeliveriesService } from './deliveries.service';
import type { WebhookOutcome, WebhookRequest, WebhookSender } from './webhook-sender';

const config = {
  WEBHOOK_RETRY_SCHEDULE: [60_000, 300_000],
  WEBHOOK_TIMEOUT_MS: 5000,
  WEBHOOK_GIVE_UP_AFTER: 86_400_000,
} as unknown as WebhookDispatcherConfig;
const logger = { info: () => undefined } as unknown as Logger;

const event: ServiceEvent = {
  id: 'evt_1',
  type: 'user.profile.updated',
  user_id: 'usr_1',
  created_at: '2026-01-01T00:00:00.000Z',
};

function setup(options: {
  recipients: WebhookRecipientsResponse;
  outcome?: WebhookOutcome;
  existing?: Delivery;
}) {
  const published: { queue: string; body: unknown }[] = [];
  const recorded: AttemptRecord[] = [];
  const posted: WebhookRequest[] = [];
  let stored: Delivery | undefined = options.existing;
  const repository = {
    createForEvent: (_id: string, rows: readonly NewDelivery[]) => {
      stored ??= rows[0] && { ...rows[0], status: 'pending', attempts: 0, firstAttemptAt: null };
      return Promise.resolve(stored && stored.attempts === 0 ? [stored] : []);
    },
    findById: () => Promise.resolve(stored ?? null),
    recordAttempt: (r: AttemptRecord) => {
      recorded.push(r);
      return Promise.resolve(true);
    },
  } as unknown as DeliveriesRepository;
  const rpc = { call: () => Promise.resolve(options.recipients) } as unknown as RpcClient;
  const amqp = {
    publish: (_x: string, queue: string, content: Buffer) => {
      published.push({ queue, body: JSON.parse(content.toString()) });
      return Promise.resolve();
    },
  } as unknown as AmqpConnection;
  const sender = {
    post: (r: WebhookRequest) => {
      posted.push(r);
      return Promise.resolve(options.outcome ?? { ok: true, statusCode: 204, error: null });
    },
  } as unknown as WebhookSender;
  const service = new DeliveriesService(repository, rpc, amqp, sender, config, logger);
  return { service, published, recorded, posted, delivery: () => stored };
}

const recipient = { client_id: 'p1', webhook_url: 'https://p1.example/hook', secrets: ['whsec_a'] };

describe('DeliveriesService', () => {
  it('fans an event out: one delivery per recipient, queued for attempt 1', async () => {
    const s = setup({ recipients: { recipients: [recipient] } });
    await s.service.fanOut(event);
    expect(s.delivery()).toMatchObject({
      clientId: 'p1',
      targetUrl: recipient.webhook_url,
      eventId: 'evt_1',
    });
    expect(s.published).toEqual([
      { queue: 'webhooks.deliveries', body: { delivery_id: s.delivery()?.deliveryId, attempt: 1 } },
    ]);
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

  it('schedules the next attempt on the retry queue of its delay after a failure', async () => {
    const s = setup({
      recipients: { recipients: [recipient] },
      outcome: { ok: false, statusCode: 500, error: 'HTTP 500' },
    });
    await s.service.fanOut(event);
    await s.service.attempt({ delivery_id: s.delivery()!.deliveryId, attempt: 1 });
    expect(s.posted[0].headers['x-svc-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(s.recorded[0]).toMatchObject({ attempt: 1, statusCode: 500, status: 'pending' });
    expect(s.published[1]).toEqual({
      queue: 'webhooks.retry.60000',
      body: { delivery_id: s.delivery()!.deliveryId, attempt: 2 },
    });
  });

  it('ends a delivery at once when the partner no longer receives webhooks', async () => {
    const s = setup({ recipients: { recipients: [recipient] } });
    await s.service.fanOut(event);
    const none = setup({ recipients: { recipients: [] }, existing: s.delivery() });
    await none.service.attempt({ delivery_id: s.delivery()!.deliveryId, attempt: 1 });
    expect(none.posted).toHaveLength(0);
    expect(none.recorded[0]).toMatchObject({ status: 'failed', nextAttemptAt: null });
    expect(none.published).toHaveLength(0);
  });

  it('ignores a duplicate message of an attempt already recorded', async () => {
    const s = setup({
      recipients: { recipients: [recipient] },
      existing: {
        deliveryId: 'dlv_1',
        eventId: 'evt_1',
        eventType: 'user.profile.updated',
        userId: 'usr_1',
        clientId: 'p1',
        targetUrl: recipient.webhook_url,
        body: '{}',
        status: 'pending',
        attempts: 2,
        firstAttemptAt: new Date(),
      },
    });
    await s.service.attempt({ delivery_id: 'dlv_1', attempt: 2 });
    expect(s.posted).toHaveLength(0);
    expect(s.recorded).toHaveLength(0);
  });
});
