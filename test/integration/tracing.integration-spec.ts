import { randomBytes } from 'node:crypto';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { AUTH_PING, SANDBOX_MEMBERS } from '@svc/contracts';
import { loadConfig, RpcRemoteError, startTracing, stopTracing, TRACING_CONFIG } from '@svc/platform';
import { request } from '../support/http';
import { accessToken } from '../support/oauth/flow';
import { eventually } from '../support/services';
import { startAuthServer, type AuthServerHarness } from '../support/starters/auth-server';
import { INTERNAL_TOKEN, startCrewApi, type CrewApiHarness } from '../support/starters/crew-api';
import { startDispatcher, type DispatcherHarness } from '../support/starters/webhook-dispatcher';
import { createPartner, grantConsent } from '../support/app-factories';
import { WebhookReceiver } from '../support/webhook-receiver';

/**
 * One trace per partner request and one per record change, across the real apps (auth-server,
 * crew-api, webhook-dispatcher, in this process) and the run's PostgreSQL, Redis and RabbitMQ,
 * with the SDK's in-memory exporter in place of OTLP. (The pg and ioredis instrumentations hook
 * Node's module loader, which Jest replaces: their spans are not looked for here.)
 */
jest.setTimeout(60_000);

const exporter = new InMemorySpanExporter();
let auth: AuthServerHarness;
let crew: CrewApiHarness;
let dispatcher: DispatcherHarness;
let receiver: WebhookReceiver;

beforeAll(async () => {
  // Before the apps are built, as serveApp does: their HTTP hooks are added only when it is on.
  const on = await startTracing('tracing-it', loadConfig(TRACING_CONFIG, {}), {
    spanProcessor: new SimpleSpanProcessor({ exporter }),
  });
  expect(on).toBe(true);
  auth = await startAuthServer();
  // crew-api last: passport keeps one strategy of each name per process (the last app's), and
  // this file's bearer requests go to crew-api. (The spans need all three in this process.)
  dispatcher = await startDispatcher(auth, {
    WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s',
    WEBHOOK_TIMEOUT_MS: '2000',
  });
  crew = await startCrewApi(auth);
  receiver = await WebhookReceiver.start();
}, 90_000);

afterAll(async () => {
  await receiver?.close();
  await dispatcher?.close();
  await crew?.close();
  await auth?.close();
  await stopTracing();
});

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

function spansOf(traceId: string): ReadableSpan[] {
  return exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
}

const idOf = (span: ReadableSpan) => span.spanContext().spanId;
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

function only(spans: ReadableSpan[], what: string, match: (s: ReadableSpan) => boolean): ReadableSpan {
  const found = spans.filter(match);
  if (found.length !== 1) {
    throw new Error(
      `expected one ${what}, found ${found.length} among: ${spans.map((s) => `${s.name} (${SpanKind[s.kind]})`).join(', ')}`,
    );
  }
  return found[0];
}

describe('a partner request', () => {
  it('is one trace: the caller → GET /v1/me → its token check over RPC → auth-server answering it', async () => {
    // A token crew-api has never seen: the introspection cache misses and crew-api asks auth-server.
    const token = await accessToken(auth, SANDBOX_MEMBERS[0]);
    const traceId = hex(16);
    const callerSpanId = hex(8);
    const res = await crew.get('/v1/me', token, { traceparent: `00-${traceId}-${callerSpanId}-01` });
    expect(res.status).toBe(200);

    const spans = await eventually(async () => {
      const got = spansOf(traceId);
      return got.some((s) => s.name === 'GET /v1/me') ? got : undefined;
    });
    const server = only(spans, 'request span', (s) => s.name === 'GET /v1/me');
    expect(server.kind).toBe(SpanKind.SERVER);
    expect(parentOf(server)).toBe(callerSpanId);
    expect(server.attributes).toMatchObject({
      'http.request.method': 'GET',
      'http.route': '/v1/me',
      'http.response.status_code': 200,
    });

    const rpcClient = only(spans, 'RPC client span', (s) => s.kind === SpanKind.CLIENT);
    expect(parentOf(rpcClient)).toBe(idOf(server));
    expect(rpcClient.attributes['rpc.system']).toBe('rabbitmq');

    const rpcServer = only(
      spans,
      'auth-server RPC span',
      (s) => s.kind === SpanKind.SERVER && s.name === rpcClient.name,
    );
    expect(parentOf(rpcServer)).toBe(idOf(rpcClient));
  });

  it('starts a trace of its own when the caller sends no traceparent', async () => {
    exporter.reset();
    const token = await accessToken(auth, SANDBOX_MEMBERS[1]);
    const res = await crew.get('/v1/me', token);
    expect(res.status).toBe(200);
    const server = await eventually(async () =>
      exporter.getFinishedSpans().find((s) => s.name === 'GET /v1/me'),
    );
    expect(server.parentSpanContext).toBeUndefined();
    expect(spansOf(server.spanContext().traceId).length).toBeGreaterThan(1);
  });
});

describe('an RPC answered with an error', () => {
  it("marks the caller's span and the answering app's span as failed, in one trace", async () => {
    exporter.reset();
    const malformed = { from: '' };
    await expect(auth.rpc.call(AUTH_PING, malformed)).rejects.toBeInstanceOf(RpcRemoteError);
    const spans = await eventually(async () => {
      const got = exporter.getFinishedSpans().filter((s) => s.name === AUTH_PING.pattern);
      return got.length === 2 ? got : undefined;
    });
    const client = only(spans, 'RPC client span', (s) => s.kind === SpanKind.CLIENT);
    const server = only(spans, 'RPC server span', (s) => s.kind === SpanKind.SERVER);
    expect(parentOf(server)).toBe(idOf(client));
    expect(server.spanContext().traceId).toBe(client.spanContext().traceId);
    expect(client.status.code).toBe(SpanStatusCode.ERROR);
    expect(server.status.code).toBe(SpanStatusCode.ERROR);
  });
});

describe('a record change', () => {
  it('is one trace: internal write → outbox publish → dispatcher → every delivery attempt, retries included', async () => {
    const member = SANDBOX_MEMBERS[2];
    const path = `/traced-${hex(4)}`;
    // The partner's endpoint fails the first attempt; the retry (through a delay queue) succeeds.
    const partner = await createPartner(auth, {
      webhookUrl: receiver.endpoint(path, (n) => (n === 1 ? 503 : 204)),
    });
    await grantConsent(auth, member.user_id, partner.client_id, ['profile:read']);

    exporter.reset();
    const traceId = hex(16);
    const callerSpanId = hex(8);
    const res = await request(`${crew.url}/internal/v1/crew/${member.user_id}/profile`, {
      method: 'PATCH',
      headers: {
        authorization: `Bearer ${INTERNAL_TOKEN}`,
        'content-type': 'application/json',
        traceparent: `00-${traceId}-${callerSpanId}-01`,
      },
      body: JSON.stringify({ role: `Bosun ${hex(2)}` }),
      timeoutMs: 10_000,
    });
    expect(res.status).toBe(200);

    await eventually(async () => (receiver.requests(path).length >= 2 ? true : undefined), 20_000);
    const attemptsOfPartner = () =>
      exporter
        .getFinishedSpans()
        .filter(
          (s) => s.name === 'webhook attempt' && s.attributes['webhook.client_id'] === partner.client_id,
        );
    const attempts = await eventually(async () => {
      const got = attemptsOfPartner();
      return got.length >= 2 ? got : undefined;
    });

    const write = only(
      exporter.getFinishedSpans(),
      'write span',
      (s) => s.name === 'PATCH /internal/v1/crew/:userId/profile',
    );
    const trace = write.spanContext().traceId;
    expect(trace).toBe(traceId);
    expect(parentOf(write)).toBe(callerSpanId);
    const spans = spansOf(trace);
    expect(write.kind).toBe(SpanKind.SERVER);

    const publish = only(spans, 'publish span', (s) => s.kind === SpanKind.PRODUCER);
    expect(publish.name).toBe('publish user.profile.updated');
    expect(parentOf(publish)).toBe(idOf(write));

    const consume = only(
      spans,
      'event consumer span',
      (s) => s.kind === SpanKind.CONSUMER && s.name === 'process webhooks.events',
    );
    expect(parentOf(consume)).toBe(idOf(publish));

    const [first, second] = [...attempts].sort(
      (a, b) => Number(a.attributes['webhook.attempt']) - Number(b.attributes['webhook.attempt']),
    );
    expect(first.spanContext().traceId).toBe(trace);
    expect(second.spanContext().traceId).toBe(trace);
    expect(parentOf(first)).toBe(idOf(consume));
    expect(first.attributes).toMatchObject({
      'webhook.attempt': 1,
      'webhook.outcome': 'retry',
      'http.response.status_code': 503,
    });

    // The retry came back through the delivery queue with the first attempt's context. (Other
    // partners of the shared test database may get this event too, each with its own retry.)
    const retryConsume = only(
      spans,
      'retry consumer span of this partner',
      (s) =>
        s.kind === SpanKind.CONSUMER &&
        s.name === 'process webhooks.deliveries' &&
        parentOf(s) === idOf(first),
    );
    expect(parentOf(second)).toBe(idOf(retryConsume));
    expect(second.attributes).toMatchObject({
      'webhook.attempt': 2,
      'webhook.outcome': 'delivered',
      'http.response.status_code': 204,
    });
  });
});
