import type { RpcClient } from '@svc/platform';
import type { PartnerPrincipal } from '@svc/security';
import type { DeliveriesRepository } from '../deliveries/deliveries.repository';
import type { WebhookOutcome, WebhookSender } from '../deliveries/webhook-sender';
import { decodeDeliveryCursor } from './dto/delivery-cursor';
import { PartnerWebhooksException } from './partner-webhooks.exception';
import type {
  EndpointState,
  PartnerDelivery,
  PartnerWebhooksRepository,
  ReplayOutcome,
} from './partner-webhooks.repository';
import { PartnerWebhooksService } from './partner-webhooks.service';

const partner = { client_id: 'p1', suspended: false, sponsorship: false } as unknown as PartnerPrincipal;
const recipient = { client_id: 'p1', webhook_url: 'https://p1.example/hook', secrets: ['whsec_a'] };

const delivery = (over: Partial<PartnerDelivery> = {}): PartnerDelivery => ({
  deliveryId: 'dlv_a',
  eventId: 'evt_a',
  eventType: 'user.profile.updated',
  userId: 'usr_1',
  status: 'delivered',
  partnerStatus: 'delivered',
  attempts: 1,
  createdAt: new Date('2026-03-03T09:15:00.000Z'),
  createdAtExact: '2026-03-03T09:15:00.123456Z',
  nextAttemptAt: null,
  redeliveryOf: null,
  giveUpReason: null,
  lastAttemptAt: new Date('2026-03-03T09:15:00.200Z'),
  lastResponseStatus: 204,
  ...over,
});

const endpointState = (status: 'enabled' | 'disabled'): EndpointState => ({
  status,
  disabledAt: status === 'disabled' ? new Date('2026-03-03T00:00:00.000Z') : null,
  disabledReason: status === 'disabled' ? 'failing' : null,
  lastSuccessAt: null,
  lastFailureAt: null,
  attempts24h: 4,
  successes24h: 3,
});

function setup(options: {
  rows?: PartnerDelivery[];
  endpoint?: 'enabled' | 'disabled';
  replay?: ReplayOutcome;
  redeliver?: ReplayOutcome;
  check?: ReplayOutcome;
  outcome?: WebhookOutcome;
}) {
  const calls: string[] = [];
  const repository = {
    page: (_c: string, _f: unknown, _a: unknown, limit: number) =>
      Promise.resolve((options.rows ?? []).slice(0, limit)),
    find: (_c: string, id: string) =>
      Promise.resolve((options.rows ?? []).find((d) => d.deliveryId === id) ?? null),
    endpoint: () => Promise.resolve(endpointState(options.endpoint ?? 'enabled')),
    replay: () => Promise.resolve(options.replay ?? { deliveryIds: [] }),
    redeliver: (_c: string, source: string) =>
      Promise.resolve(options.redeliver ?? { deliveryIds: [`${source}_again`] }),
    spendEndpointCheck: (_c: string, perHour: number) => {
      calls.push(`spend check of ${perHour}`);
      return Promise.resolve(options.check ?? { deliveryIds: [] });
    },
    setStatus: (_c: string, status: string) => {
      calls.push(`set ${status}`);
      return Promise.resolve();
    },
    recordTest: (t: { ok: boolean }) => {
      calls.push(`record test ${t.ok}`);
      return Promise.resolve();
    },
  } as unknown as PartnerWebhooksRepository;
  // No test here reaches the deliveries table: redeliveries are written by the repository above.
  const deliveries = {} as unknown as DeliveriesRepository;
  const rpc = {
    call: () => Promise.resolve({ partners: [recipient], answers: [{ client_ids: ['p1'] }] }),
  } as unknown as RpcClient;
  const sender = {
    post: () => {
      calls.push('send');
      return Promise.resolve(options.outcome ?? { ok: true, statusCode: 204, error: null, responseBody: '' });
    },
  } as unknown as WebhookSender;
  const service = new PartnerWebhooksService(repository, deliveries, rpc, sender, {
    WEBHOOK_TIMEOUT_MS: 5000,
    WEBHOOK_REPLAYS_PER_HOUR: 10,
    WEBHOOK_REDELIVERIES_PER_HOUR: 60,
    WEBHOOK_ENDPOINT_CHECKS_PER_HOUR: 20,
  });
  return { service, calls };
}

async function refusal(promise: Promise<unknown>): Promise<PartnerWebhooksException> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(PartnerWebhooksException);
  return err as PartnerWebhooksException;
}

describe('PartnerWebhooksService', () => {
  it('pages newest first: a cursor at the last item shown when a further row exists, none on the last page', async () => {
    const rows = [delivery({ deliveryId: 'dlv_b' }), delivery({ deliveryId: 'dlv_a' })];
    const { service } = setup({ rows });
    const first = await service.list(partner, { limit: 1 });
    expect(first.items.map((d) => d.delivery_id)).toEqual(['dlv_b']);
    expect(decodeDeliveryCursor(first.next_cursor ?? '')).toEqual({
      createdAt: '2026-03-03T09:15:00.123456Z',
      deliveryId: 'dlv_b',
    });
    expect((await service.list(partner, { limit: 2 })).next_cursor).toBeNull();
  });

  it('shows a retrying delivery with its next attempt and a given-up one with why', async () => {
    const rows = [
      delivery({
        deliveryId: 'dlv_r',
        status: 'pending',
        partnerStatus: 'failed',
        attempts: 2,
        nextAttemptAt: new Date(0),
      }),
      delivery({
        deliveryId: 'dlv_g',
        status: 'failed',
        partnerStatus: 'given_up',
        attempts: 1,
        giveUpReason: 'gone',
      }),
    ];
    const { service } = setup({ rows });
    const page = await service.list(partner, { limit: 10 });
    expect(page.items.map((d) => d.status)).toEqual(['failed', 'given_up']);
    // The retrying one shows when it is tried next; a given-up one schedules nothing.
    expect(page.items.map((d) => d.next_attempt_at)).toEqual(['1970-01-01T00:00:00.000Z', null]);
  });

  it('refuses to redeliver a delivery still being retried, or while the endpoint is disabled (409)', async () => {
    const retrying = setup({ rows: [delivery({ status: 'pending', attempts: 1 })] });
    expect((await refusal(retrying.service.redeliver(partner, 'dlv_a'))).code).toBe('still_retrying');
    const disabled = setup({ rows: [delivery()], endpoint: 'disabled' });
    expect((await refusal(disabled.service.redeliver(partner, 'dlv_a'))).code).toBe('endpoint_disabled');
    const unknown = setup({ rows: [] });
    expect((await refusal(unknown.service.redeliver(partner, 'dlv_a'))).code).toBe('delivery_not_found');
  });

  it('answers a spent redelivery budget with its Retry-After (429), queueing nothing', async () => {
    const { service, calls } = setup({
      rows: [delivery({ status: 'delivered' })],
      redeliver: { deliveryIds: [], retryAfterSeconds: 321 },
    });
    const err = await refusal(service.redeliver(partner, 'dlv_a'));
    expect(err).toMatchObject({ code: 'redelivery_budget_exceeded', retryAfterSeconds: 321 });
    expect(calls).toEqual([]);
  });

  it('answers a spent replay budget with its Retry-After', async () => {
    const { service } = setup({ replay: { deliveryIds: [], retryAfterSeconds: 1234 } });
    const err = await refusal(
      service.replay(partner, { since: new Date(0), until: new Date(1), status: 'given_up' }),
    );
    expect(err).toMatchObject({ code: 'replay_budget_exceeded', retryAfterSeconds: 1234 });
  });

  it('enables the endpoint only when the test is acknowledged with a 2xx, and says what the test got', async () => {
    const failing = setup({
      endpoint: 'disabled',
      outcome: { ok: false, statusCode: null, error: 'timeout' },
    });
    const refused = await failing.service.enable(partner);
    expect(failing.calls).toEqual(['spend check of 20', 'send', 'record test false']);
    expect(refused.test).toMatchObject({ response_status: null, error: 'timeout' });
    expect(refused.endpoint.status).toBe('disabled');

    const ok = setup({ endpoint: 'disabled' });
    const accepted = await ok.service.enable(partner);
    expect(ok.calls).toEqual(['spend check of 20', 'send', 'record test true', 'set enabled']);
    expect(accepted.test).toMatchObject({
      response_status: 204,
      error: null,
      event_id: expect.stringMatching(/^evt_/),
    });
  });

  it('sends the portal’s test event like the enable test, recorded, and leaves the endpoint as it is', async () => {
    const ok = setup({ endpoint: 'disabled' });
    const tested = await ok.service.test(partner);
    expect(ok.calls).toEqual(['spend check of 20', 'send', 'record test true']);
    expect(tested.test).toMatchObject({ response_status: 204, delivery_id: expect.stringMatching(/^dlv_/) });
    expect(tested.endpoint.status).toBe('disabled');
  });

  it('sends no test, and enables nothing, past the hourly budget of endpoint tests: 429 with when to retry', async () => {
    for (const action of ['test', 'enable'] as const) {
      const spent = setup({ endpoint: 'disabled', check: { deliveryIds: [], retryAfterSeconds: 321 } });
      const err = await refusal(spent.service[action](partner));
      expect(err).toMatchObject({ code: 'endpoint_check_budget_exceeded', retryAfterSeconds: 321 });
      expect(err.message).toContain('20 endpoint tests per hour');
      expect(spent.calls).toEqual(['spend check of 20']);
    }
  });
});
