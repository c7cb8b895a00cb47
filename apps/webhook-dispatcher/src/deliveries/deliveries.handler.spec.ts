import { EVENT_BATCH_CONTENT_TYPE, type ServiceEvent } from '@svc/contracts';
import { createLogger, type AmqpConnection, type InboundMessage, type MessageHandler } from '@svc/platform';
import { DeliveriesHandler } from './deliveries.handler';
import type { DeliveriesService } from './deliveries.service';
import { DELIVERIES_QUEUE, EVENTS_QUEUE } from './webhook-queues';

const tick = () => new Promise((r) => setImmediate(r));

function event(n: number): ServiceEvent {
  return {
    id: `evt_${n}`,
    type: 'user.vessels.updated',
    user_id: `usr_${n}`,
    created_at: '2026-11-26T10:00:00Z',
  };
}

function packed(payloads: unknown[]): InboundMessage {
  const events = payloads.map((payload, i) => ({ message_id: `m${i}`, payload }));
  return {
    content: Buffer.from(JSON.stringify({ events })),
    routingKey: 'user.vessels.updated',
    exchange: 'crew.events',
    redelivered: false,
    properties: { contentType: EVENT_BATCH_CONTENT_TYPE, headers: {} } as InboundMessage['properties'],
  };
}

/** The handler with a fake broker (its consumers captured) and a fan-out each test finishes by hand. */
async function start(concurrency: number) {
  const consumers = new Map<string, MessageHandler>();
  const prefetch = new Map<string, number | undefined>();
  const amqp = {
    addTopology: async () => undefined,
    consume: async (queue: string, handler: MessageHandler, options: { prefetch?: number }) => {
      consumers.set(queue, handler);
      prefetch.set(queue, options.prefetch);
    },
  } as unknown as AmqpConnection;
  const running = new Map<string, { resolve: () => void; reject: (err: Error) => void }>();
  const started: string[] = [];
  const deliveries = {
    retryPolicy: { schedule: [1000], giveUpAfterMs: 60_000 },
    fanOut: (e: ServiceEvent) =>
      new Promise<void>((resolve, reject) => {
        started.push(e.id);
        running.set(e.id, { resolve, reject });
      }),
  } as unknown as DeliveriesService;
  const handler = new DeliveriesHandler(
    amqp,
    deliveries,
    { WEBHOOK_CONCURRENCY: concurrency },
    createLogger('handler-test', 'silent'),
  );
  await handler.onModuleInit();
  return { onEvents: consumers.get(EVENTS_QUEUE)!, prefetch, running, started };
}

describe('DeliveriesHandler, event messages', () => {
  it('takes a message per permit on both queues: a pack of one holds its message while its fan-out waits', async () => {
    const { prefetch } = await start(400);
    expect([prefetch.get(EVENTS_QUEUE), prefetch.get(DELIVERIES_QUEUE)]).toEqual([400, 400]);
  });

  it('fans out each valid event, at most WEBHOOK_CONCURRENCY at once, and resolves when all are done', async () => {
    const { onEvents, running, started } = await start(2);
    let done = false;
    const handled = onEvents(packed([event(1), { id: 'evt_malformed' }, event(2), event(3)])).then(() => {
      done = true;
    });
    await tick();
    // The malformed event is dropped alone; two permits: the third valid event waits.
    expect(started).toEqual(['evt_1', 'evt_2']);
    running.get('evt_1')!.resolve();
    await tick();
    expect(started).toEqual(['evt_1', 'evt_2', 'evt_3']);
    running.get('evt_2')!.resolve();
    await tick();
    expect(done).toBe(false);
    running.get('evt_3')!.resolve();
    await handled;
    expect(done).toBe(true);
  });

  it('fails the message (to be redelivered) only once every event of it has settled', async () => {
    const { onEvents, running } = await start(10);
    let settled = false;
    const handled = onEvents(packed([event(1), event(2)])).finally(() => {
      settled = true;
    });
    await tick();
    running.get('evt_1')!.reject(new Error('database unavailable'));
    await tick();
    // A redelivery now would fan out evt_2 a second time while this one still runs.
    expect(settled).toBe(false);
    running.get('evt_2')!.resolve();
    await expect(handled).rejects.toThrow('database unavailable');
  });

  it('fans out the one event of a pack of one', async () => {
    const { onEvents, running, started } = await start(10);
    const handled = onEvents(packed([event(1)]));
    await tick();
    expect(started).toEqual(['evt_1']);
    running.get('evt_1')!.resolve();
    await expect(handled).resolves.toBeUndefined();
  });

  it('acks and ignores an event of a type that is not a webhook, fanning out the others', async () => {
    const { onEvents, running, started } = await start(10);
    const handled = onEvents(packed([{ ...event(1), type: 'crew.member.registered' }, event(2)]));
    await tick();
    expect(started).toEqual(['evt_2']);
    running.get('evt_2')!.resolve();
    await expect(handled).resolves.toBeUndefined();
  });

  it.each([
    ['an envelope that is not a pack', '{"events":"none"}'],
    ['one event alone, not in a pack', JSON.stringify(event(1))],
    ['no JSON', 'evt_1'],
  ])('drops a message of %s, without fanning anything out', async (_case, content) => {
    const { onEvents, started } = await start(10);
    const message = { ...packed([event(1)]), content: Buffer.from(content) };
    await expect(onEvents(message)).resolves.toBeUndefined();
    expect(started).toEqual([]);
  });
});
