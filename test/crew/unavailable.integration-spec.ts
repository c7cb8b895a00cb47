import { SANDBOX_MEMBERS } from '@svc/contracts';
import { eventually } from '../support/services';
import { TcpProxy } from '../support/tcp-proxy';
import { startAuthServer, type AuthServerHarness } from '../support/starters/auth-server';
import { request, type HttpResponse, expectProblem } from '../support/http';
import { spawnCrewApi, type CrewApiProcess } from '../support/starters/crew-api';
import { accessToken } from '../support/oauth/flow';

/**
 * docs/rules.md's 503 `service_unavailable`: when crew-api's database or the token check
 * (auth-server) does not answer, a request fails fast with a Problem and never hangs. crew-api
 * runs as its built process; its database sits behind a TCP relay this test cuts (connections
 * dropped, the port closed), and auth-server is stopped outright.
 */
jest.setTimeout(45_000);

/** Far above a fast failure, far below a hang (the platform's statement timeout is 8 s). */
const NO_HANG_MS = 5000;
const ENDPOINTS = ['/v1/me', '/v1/me/sea-time', '/v1/me/sea-time/recent', '/v1/me/vessels'] as const;
const alex = SANDBOX_MEMBERS[0];

let auth: AuthServerHarness;
let authRunning = false;
let crew: CrewApiProcess;
let proxy: TcpProxy;
let token: string;

beforeAll(async () => {
  auth = await startAuthServer();
  authRunning = true;
  const database = new URL(auth.services.databaseUrl);
  proxy = new TcpProxy(database.hostname, Number(database.port || 5432));
  await proxy.start();
  const viaProxy = new URL(auth.services.databaseUrl);
  viaProxy.hostname = '127.0.0.1';
  viaProxy.port = String(proxy.port);
  crew = await spawnCrewApi(auth, 'unavailable', {
    DATABASE_URL: viaProxy.toString(),
    RPC_TIMEOUT_MS: '1500',
  });
  token = await accessToken(auth, alex);
}, 60_000);

afterAll(async () => {
  await crew?.stop();
  await proxy?.stop();
  if (authRunning) await auth.close();
});

async function fast(call: Promise<HttpResponse>): Promise<HttpResponse> {
  const res = await call;
  expect(res.elapsedMs).toBeLessThan(NO_HANG_MS);
  return res;
}

it('answers 503 service_unavailable at once while the database is unreachable, and recovers', async () => {
  for (const path of ENDPOINTS) expect((await crew.get(path, token)).status).toBe(200);
  await proxy.cut();
  try {
    for (const path of ENDPOINTS) {
      expectProblem(await fast(crew.get(path, token)), 503, 'service_unavailable');
    }
    const write = await fast(
      crew.internal('PATCH', '/internal/v1/crew/usr_nobody/profile', { role: 'Master' }),
    );
    expectProblem(write, 503, 'service_unavailable');
    // Metrics still render, the outbox backlog unknown rather than the whole scrape failing.
    const metrics = await fast(request(`${crew.metricsUrl}/metrics`, { timeoutMs: 10_000 }));
    expect(metrics.status).toBe(200);
    // prom-client spells it `Nan`; Prometheus parses either.
    expect(metrics.text).toMatch(/^outbox_unpublished_messages\{app="crew-api"\} nan$/im);
    expect(metrics.text).toMatch(/^process_cpu_user_seconds_total\{app="crew-api"\} /m);
  } finally {
    await proxy.restore();
  }
  await eventually(async () => ((await crew.get('/v1/me', token)).status === 200 ? true : undefined));
});

it('answers 503 service_unavailable within the RPC timeout when the token check cannot be made', async () => {
  // A token crew-api has never seen (nothing cached for it), then auth-server goes away.
  const fresh = await accessToken(auth, alex, { scope: 'profile:read' });
  await auth.close();
  authRunning = false;
  expectProblem(await fast(crew.get('/v1/me', fresh)), 503, 'service_unavailable');
});
