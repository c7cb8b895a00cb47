import { SANDBOX_PARTNERS, type ProblemBody } from '@svc/contracts';
import { basicAuthorization } from '../support/factories';
import { request, type HttpResponse, expectProblem as expectGatewayProblem } from '../support/http';
import { eventually } from '../support/services';
import { startSystem, type RunningSystem } from '../support/system';
import { WebhookReceiver } from '../support/webhook-receiver';
import { authorize, bearer, json, type RegisteredPartner, registerPartner } from '../support/e2e-client';

/**
 * A partner's webhook self-service through the gateway (issue 17), every app a process: its own
 * delivery log, redelivery, replay, endpoint health, auto-disable and re-enable, and a receiver's
 * 410. Each test works on partners it registers itself (the partners CLI, as an operator would),
 * whose events are `webhook.test` events of jo.kim that only they receive: nothing here changes
 * data another suite reads.
 */
jest.setTimeout(120_000);

const DISABLE_AFTER = '2s';
const REPLAYS_PER_HOUR = 2;

interface Partner extends RegisteredPartner {
  /** A bearer token of this partner for jo.kim: `GET /v1/webhooks/test` sends this partner one event. */
  readonly token: string;
}

interface Delivery {
  readonly delivery_id: string;
  readonly event_id: string;
  readonly event_type: string;
  readonly status: string;
  readonly attempt_count: number;
  readonly next_attempt_at: string | null;
  readonly last_response_status: number | null;
}

interface Attempt {
  readonly attempt: number;
  readonly response_status: number | null;
  readonly error: string | null;
  readonly duration_ms: number;
  readonly response_body: string | null;
}

let system: RunningSystem;
let receiver: WebhookReceiver;
/** What each partner's endpoint answers now, by path. */
const answers = new Map<string, number>();

const url = (p: string) => `${system.baseUrl}${p}`;

beforeAll(async () => {
  receiver = await WebhookReceiver.start();
  system = await startSystem({
    label: 'webhook-self-service',
    env: {
      WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s,1s,1s',
      WEBHOOK_DISABLE_AFTER: DISABLE_AFTER,
      WEBHOOK_REPLAYS_PER_HOUR: String(REPLAYS_PER_HOUR),
      WEBHOOK_TIMEOUT_MS: '2000',
    },
  });
}, 240_000);

afterAll(async () => {
  // The short WEBHOOK_DISABLE_AFTER also disabled the sandbox partners, whose default URL has no
  // receiver during this suite; the suites after it share this database and deliver to them.
  for (const { client_id } of SANDBOX_PARTNERS) {
    await system?.cli('webhook-dispatcher', ['deliveries', 'endpoint-enable', client_id]);
  }
  await system?.stop();
  await receiver?.close();
}, 120_000);

/** A partner of this test alone: registered with the partners CLI, its endpoint on the receiver. */
async function newPartner(label: string): Promise<Partner> {
  const p = await registerPartner({ system, receiver, answers }, `e2e-wh-${label}`, `E2E ${label}`);
  const { access_token } = await authorize(system, 'jo.kim@sandbox.test', 'profile:read', p.client);
  return { ...p, token: access_token };
}

/** One `webhook.test` event to the partner (crew-api's outbox, then the dispatcher's fan-out). */
async function sendEvent(p: Partner): Promise<{ event_id: string; delivery_id: string }> {
  const res = await bearer(url('/v1/webhooks/test'), p.token);
  expect(res.status).toBe(200);
  return res.json<{ event_id: string; delivery_id: string }>();
}

const get = (p: Partner, path: string) => json(url(`/v1/partners/webhooks${path}`), 'GET', p.basic);
const post = (p: Partner, path: string, body?: unknown) =>
  json(url(`/v1/partners/webhooks${path}`), 'POST', p.basic, body);

async function deliveryOf(p: Partner, id: string): Promise<Delivery & { attempts: Attempt[] }> {
  const res = await get(p, `/deliveries/${id}`);
  expect(res.status).toBe(200);
  return res.json<Delivery & { attempts: Attempt[] }>();
}

/** Waits until the delivery reaches `status`, and returns it. */
function deliveryReaching(p: Partner, id: string, status: string, timeoutMs = 30_000) {
  return eventually(async () => {
    const res = await get(p, `/deliveries/${id}`);
    if (res.status !== 200) return undefined;
    const d = res.json<Delivery & { attempts: Attempt[]; given_up_reason: string | null }>();
    return d.status === status ? d : undefined;
  }, timeoutMs);
}

function eventsReceived(p: Partner, eventId: string) {
  return receiver.requests(p.hook).filter((r) => r.headers['x-svc-event-id'] === eventId);
}

const expectProblem = (res: HttpResponse, status: number, code: string): ProblemBody =>
  expectGatewayProblem(res, status, code, system.docsUrl);

describe('webhook self-service through the gateway', () => {
  let p1: Partner;
  let other: Partner;

  beforeAll(async () => {
    p1 = await newPartner('log');
    other = await newPartner('other');
  }, 120_000);

  it('GET endpoint: the registered URL, enabled, and its health, with both kinds of rate-limit headers', async () => {
    const res = await get(p1, '/endpoint');
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({
      url: receiver.endpoint(p1.hook, () => answers.get(p1.hook) ?? 500),
      status: 'enabled',
      disabled_at: null,
      disabled_reason: null,
      last_success_at: null,
      last_failure_at: null,
      attempts_24h: 0,
      success_rate_24h: null,
    });
    expect(res.header('x-ratelimit-remaining')).toMatch(/^\d+$/);
    // draft-ietf-httpapi-ratelimit-headers-11: the same window as the X- headers.
    const remaining = res.header('x-ratelimit-remaining');
    expect(res.header('ratelimit')).toMatch(new RegExp(`^"(minute|day)";r=${remaining};t=\\d+$`));
    expect(res.header('ratelimit-policy')).toMatch(
      new RegExp(`^"(minute|day)";q=${res.header('x-ratelimit-limit')};w=(60|86400)$`),
    );
  });

  it('answers 401 without credentials and 403 to a suspended partner (no sponsorship program needed)', async () => {
    const anonymous = await request(url('/v1/partners/webhooks/deliveries'));
    expectProblem(anonymous, 401, 'invalid_token');
    expect(anonymous.header('www-authenticate')).toBe('Basic realm="partners"');
    const suspended = await json(
      url('/v1/partners/webhooks/endpoint'),
      'GET',
      basicAuthorization('sandbox-partner-suspended', 'sandbox-secret-suspended'),
    );
    expectProblem(suspended, 403, 'insufficient_scope');
  });

  it('lists the delivery and shows its attempts; redelivers it with the same event id and a new delivery id', async () => {
    const sent = await sendEvent(p1);
    const delivered = await deliveryReaching(p1, sent.delivery_id, 'delivered');
    expect(delivered).toMatchObject({
      delivery_id: sent.delivery_id,
      event_id: sent.event_id,
      event_type: 'webhook.test',
      attempt_count: 1,
      next_attempt_at: null,
      last_response_status: 204,
      given_up_reason: null,
    });
    expect(delivered.attempts).toEqual([
      {
        attempt: 1,
        attempted_at: expect.stringMatching(/Z$/),
        response_status: 204,
        error: null,
        duration_ms: expect.any(Number),
        response_body: '',
      },
    ]);

    const list = await get(p1, '/deliveries?status=delivered&event_type=webhook.test&limit=1');
    expect(list.status).toBe(200);
    const page = list.json<{ items: Delivery[]; next_cursor: string | null }>();
    expect(page.items.map((d) => d.delivery_id)).toEqual([sent.delivery_id]);

    const redelivered = await post(p1, `/deliveries/${sent.delivery_id}/redeliver`);
    expect(redelivered.status).toBe(202);
    const again = redelivered.json<{ delivery_id: string; event_id: string; redelivery_of: string }>();
    expect(again).toEqual({
      delivery_id: expect.stringMatching(/^dlv_/),
      event_id: sent.event_id,
      redelivery_of: sent.delivery_id,
      status: 'pending',
    });
    expect(again.delivery_id).not.toBe(sent.delivery_id);
    await deliveryReaching(p1, again.delivery_id, 'delivered');
    const received = eventsReceived(p1, sent.event_id);
    expect(received.map((r) => r.headers['x-svc-delivery-id'])).toEqual([
      sent.delivery_id,
      again.delivery_id,
    ]);
    expect(received[1].rawBody.equals(received[0].rawBody)).toBe(true);

    // Newest first, keyset-paginated: the redelivery, then the original, one per page.
    const first = (await get(p1, '/deliveries?limit=1')).json<{ items: Delivery[]; next_cursor: string }>();
    expect(first.items.map((d) => d.delivery_id)).toEqual([again.delivery_id]);
    const second = await get(p1, `/deliveries?limit=1&cursor=${encodeURIComponent(first.next_cursor)}`);
    expect(second.json<{ items: Delivery[] }>().items.map((d) => d.delivery_id)).toEqual([sent.delivery_id]);

    const health = (await get(p1, '/endpoint')).json<{ attempts_24h: number; success_rate_24h: number }>();
    expect(health).toMatchObject({ attempts_24h: 2, success_rate_24h: 1 });
  });

  it('shows another partner’s delivery as 404, never 403, on every route that names one', async () => {
    const sent = await sendEvent(p1);
    await deliveryReaching(p1, sent.delivery_id, 'delivered');
    expectProblem(await get(other, `/deliveries/${sent.delivery_id}`), 404, 'not_found');
    expectProblem(await post(other, `/deliveries/${sent.delivery_id}/redeliver`), 404, 'not_found');
    const theirs = (await get(other, '/deliveries')).json<{ items: Delivery[] }>();
    expect(theirs.items.map((d) => d.delivery_id)).not.toContain(sent.delivery_id);
    expectProblem(await get(p1, '/deliveries/not-a-delivery'), 404, 'not_found');
  });

  it('refuses bad list parameters and a replay window over 7 days with 422', async () => {
    const badLimit = expectProblem(await get(p1, '/deliveries?limit=0'), 422, 'invalid_request');
    expect(badLimit.errors?.map((e) => e.field)).toEqual(['limit']);
    const badCursor = expectProblem(await get(p1, '/deliveries?cursor=forged'), 422, 'invalid_request');
    expect(badCursor.errors?.map((e) => e.field)).toEqual(['cursor']);
    const wide = await post(p1, '/replay', {
      since: '2026-01-01T00:00:00Z',
      until: '2026-01-09T00:00:00Z',
      status: 'given_up',
    });
    expect(expectProblem(wide, 422, 'invalid_request').errors?.map((e) => e.field)).toEqual(['until']);
  });
});

describe('a receiver answering 410 Gone', () => {
  it('ends the delivery at once: given_up, reason gone, one attempt, no retry scheduled', async () => {
    const p = await newPartner('gone');
    answers.set(p.hook, 410);
    const sent = await sendEvent(p);
    const gone = await deliveryReaching(p, sent.delivery_id, 'given_up');
    expect(gone).toMatchObject({
      attempt_count: 1,
      next_attempt_at: null,
      last_response_status: 410,
      given_up_reason: 'gone',
    });
    expect(gone.attempts).toEqual([
      expect.objectContaining({
        attempt: 1,
        response_status: 410,
        error: null,
        response_body: 'x'.repeat(1024),
      }),
    ]);
  });
});

describe('an endpoint that keeps failing', () => {
  it('is disabled after WEBHOOK_DISABLE_AFTER; new events are skipped; enable tests it first; replay sends the skipped ones', async () => {
    const p = await newPartner('outage');
    const start = new Date(Date.now() - 60_000).toISOString();
    answers.set(p.hook, 503);

    // Failing attempts (one a second) until the endpoint has failed for longer than DISABLE_AFTER.
    const failing = await sendEvent(p);
    const disabled = await eventually(async () => {
      const e = (await get(p, '/endpoint')).json<{ status: string; disabled_reason: string | null }>();
      return e.status === 'disabled' ? e : undefined;
    }, 30_000);
    expect(disabled).toMatchObject({ status: 'disabled', disabled_reason: 'failing' });
    expect((await deliveryOf(p, failing.delivery_id)).attempts[0]).toMatchObject({
      response_status: 503,
      error: null,
    });

    // While disabled: recorded as skipped, never attempted.
    const skipped = await sendEvent(p);
    await deliveryReaching(p, skipped.delivery_id, 'skipped');
    expect(eventsReceived(p, skipped.event_id)).toEqual([]);
    const listed = (await get(p, '/deliveries?status=skipped')).json<{ items: Delivery[] }>();
    expect(listed.items.map((d) => d.delivery_id)).toEqual([skipped.delivery_id]);
    expectProblem(
      await post(p, '/replay', {
        since: start,
        until: new Date(Date.now() + 60_000).toISOString(),
        status: 'skipped',
      }),
      409,
      'conflict',
    );

    // Enable while the endpoint still fails: the test is answered, the endpoint stays disabled.
    const refused = await post(p, '/endpoint/enable');
    expect(refused.status).toBe(200);
    expect(refused.json()).toMatchObject({
      endpoint: { status: 'disabled' },
      test: { response_status: 503, error: null, event_id: expect.stringMatching(/^evt_/) },
    });

    answers.set(p.hook, 204);
    const enabled = await post(p, '/endpoint/enable');
    expect(enabled.json()).toMatchObject({
      endpoint: { status: 'enabled', disabled_at: null, disabled_reason: null },
      test: { response_status: 204, error: null },
    });

    const until = new Date(Date.now() + 60_000).toISOString();
    const replay = await post(p, '/replay', { since: start, until, status: 'skipped' });
    expect(replay.status).toBe(202);
    expect(replay.json()).toEqual({ replayed_count: 1 });
    // The skipped event arrives with its own event id (receivers that dedupe stay correct).
    const arrived = await eventually(async () => {
      const got = eventsReceived(p, skipped.event_id);
      return got.length > 0 ? got : undefined;
    }, 30_000);
    expect(arrived).toHaveLength(1);
    expect(arrived[0].headers['x-svc-delivery-id']).not.toBe(skipped.delivery_id);

    // The hourly replay budget: REPLAYS_PER_HOUR calls, then 429 with Retry-After.
    const second = await post(p, '/replay', { since: start, until, status: 'given_up' });
    expect(second.status).toBe(202);
    const third = await post(p, '/replay', { since: start, until, status: 'given_up' });
    expectProblem(third, 429, 'rate_limit_exceeded');
    expect(Number(third.header('retry-after'))).toBeGreaterThan(0);
  });

  it('can be disabled and enabled by an operator with npm run deliveries, as the partner sees it', async () => {
    const p = await newPartner('operator');
    const off = await system.cli('webhook-dispatcher', ['deliveries', 'endpoint-disable', p.clientId]);
    expect(off.code).toBe(0);
    expect((await get(p, '/endpoint')).json()).toMatchObject({
      status: 'disabled',
      disabled_reason: 'operator',
    });
    const shown = await system.cli('webhook-dispatcher', ['deliveries', 'endpoint', p.clientId, '--json']);
    expect(JSON.parse(shown.stdout)).toMatchObject({ client_id: p.clientId, status: 'disabled' });
    const on = await system.cli('webhook-dispatcher', ['deliveries', 'endpoint-enable', p.clientId]);
    expect(on.code).toBe(0);
    expect((await get(p, '/endpoint')).json()).toMatchObject({ status: 'enabled' });
  });
});
