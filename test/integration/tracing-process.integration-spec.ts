import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { SANDBOX_MEMBERS } from '@svc/contracts';
import { accessToken } from '../support/oauth/flow';
import { startAuthServer, type AuthServerHarness } from '../support/starters/auth-server';
import { spawnCrewApi, type CrewApiProcess } from '../support/starters/crew-api';

/**
 * crew-api as the built process (`node dist/.../main.js`), exporting to a collector of the test's
 * own over OTLP/HTTP: what only a real process shows. The pg and ioredis instrumentations hook
 * Node's module loader (which Jest replaces), so their spans appear here only if tracing starts
 * before the app's clients are made; and the spans still buffered when the app stops are sent.
 */
jest.setTimeout(60_000);

interface OtlpSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
  readonly kind: number;
  readonly attributes?: { key: string; value: { stringValue?: string } }[];
}

interface Export {
  readonly service: unknown;
  readonly spans: OtlpSpan[];
}

const exports: Export[] = [];
let collector: http.Server;
let endpoint: string;
let auth: AuthServerHarness;
let crew: CrewApiProcess | undefined;

/** OTLP/JSON ids are hex here; base64 (the protobuf JSON mapping) is turned into hex. */
function hexId(id: string | undefined): string | undefined {
  if (id === undefined || id === '') return undefined;
  return /^[0-9a-f]+$/.test(id) ? id : Buffer.from(id, 'base64').toString('hex');
}

function record(body: string): void {
  const parsed = JSON.parse(body) as {
    resourceSpans?: {
      resource?: { attributes?: { key: string; value: { stringValue?: string } }[] };
      scopeSpans?: { spans?: OtlpSpan[] }[];
    }[];
  };
  for (const rs of parsed.resourceSpans ?? []) {
    const service = rs.resource?.attributes?.find((a) => a.key === 'service.name')?.value.stringValue;
    const spans = (rs.scopeSpans ?? []).flatMap((ss) => ss.spans ?? []);
    exports.push({
      service,
      spans: spans.map((s) => ({
        ...s,
        traceId: hexId(s.traceId) ?? '',
        spanId: hexId(s.spanId) ?? '',
        parentSpanId: hexId(s.parentSpanId),
      })),
    });
  }
}

beforeAll(async () => {
  collector = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces') record(Buffer.concat(chunks).toString('utf8'));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
  auth = await startAuthServer();
}, 60_000);

afterAll(async () => {
  await crew?.stop();
  await auth?.close();
  await new Promise((resolve) => collector.close(resolve));
});

it('exports the request span with its PostgreSQL and Redis spans, and flushes them when the app stops', async () => {
  crew = await spawnCrewApi(auth, 'tracing', {
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_TRACES_SAMPLER: 'parentbased_always_on',
  });
  const token = await accessToken(auth, SANDBOX_MEMBERS[0]);
  const traceId = randomBytes(16).toString('hex');
  const callerSpanId = randomBytes(8).toString('hex');
  const res = await crew.get('/v1/me', token, { traceparent: `00-${traceId}-${callerSpanId}-01` });
  expect(res.status).toBe(200);
  // The batch processor would wait a few seconds more: the shutdown sends what it holds.
  await crew.stop();
  crew = undefined;

  const spans = exports.flatMap((e) => e.spans).filter((s) => s.traceId === traceId);
  expect(exports.every((e) => e.service === 'crew-api')).toBe(true);
  const server = spans.find((s) => s.name === 'GET /v1/me');
  expect(server).toBeDefined();
  expect(server?.parentSpanId).toBe(callerSpanId);
  const names = spans.map((s) => s.name);
  // ioredis: the token cache and the rate limiter; pg: the profile.
  const redis = spans.filter((s) => ['get', 'exists', 'evalsha', 'eval', 'mget'].includes(s.name));
  if (redis.length === 0) throw new Error(`no Redis span in the trace: ${names.join(', ')}`);
  expect(redis.every((s) => s.parentSpanId === server?.spanId)).toBe(true);
  // A Redis span names its command and nothing else: no key, no argument (token digests, client ids).
  for (const s of redis) {
    const text = s.attributes?.find((a) => a.key === 'db.query.text')?.value.stringValue;
    expect(text).toBe(s.name);
  }
  expect(JSON.stringify(redis)).not.toContain(token);
  expect(names.some((n) => n.startsWith('pg.query'))).toBe(true);
});
