import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Redis from 'ioredis';
import { Pool } from 'pg';
import { rateLimitKey } from '../../libs/security/src/limits/rate-limit';
import type { NestAppName } from '../../scripts/lib/apps.cjs';
import { request, type HttpResponse } from '../support/http';
import { startSystem, type RunningSystem } from '../support/system';
import { WebhookReceiver } from '../support/webhook-receiver';
import {
  A,
  authorize,
  BASIC_A,
  BASIC_B,
  bearer,
  INTERNAL,
  json,
  postForm,
  refresh,
  type TokenPair,
} from '../support/e2e-client';

/**
 * Two processes of every app behind the gateway (issue 12, "Scale-out, proven"): what a partner does
 * works whichever replica answers, state is shared (cursors, rate limits, revocations, webhook
 * retries), and replicas can crash or be restarted one by one under load.
 */
jest.setTimeout(120_000);

const REPLICAS = 2;
const RATE_LIMIT_PER_MINUTE = 200;
const HOOK = '/scale-hooks';
const APPS: readonly NestAppName[] = [
  'auth-server',
  'consent-ui',
  'crew-api',
  'sponsorship-api',
  'webhook-dispatcher',
];

let system: RunningSystem;
let receiver: WebhookReceiver;
let redis: Redis;
let db: Pool;
/** alex.morgan (120 vessel periods): the reads. */
let reader: TokenPair;
/** jo.kim: the record changes whose webhooks the load follows. */
let joUserId: string;

const url = (p: string) => `${system.baseUrl}${p}`;

beforeAll(async () => {
  receiver = await WebhookReceiver.start();
  system = await startSystem({
    label: 'replicas',
    replicas: REPLICAS,
    env: {
      SANDBOX_WEBHOOK_URL: receiver.endpoint(HOOK, () => 204),
      WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s,1s,1s',
      RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT_PER_MINUTE),
      // The preStop-like pause of a drain: the replica keeps serving, every answer closing its
      // connection. Longer than the gateway's fail_timeout (1 s), so that by the time a rolling
      // restart stops the next replica, the gateway has taken the restarted one back.
      SHUTDOWN_DELAY_MS: '1500',
    },
  });
  redis = new Redis(process.env.REDIS_URL!, { keyPrefix: process.env.REDIS_KEY_PREFIX, lazyConnect: true });
  db = new Pool({ connectionString: process.env.DATABASE_URL, max: 2 });
  reader = await authorize(system, 'alex.morgan@sandbox.test');
  const jo = await authorize(system, 'jo.kim@sandbox.test', 'profile:read');
  joUserId = (await bearer(url('/v1/me'), jo.access_token)).json<{ user_id: string }>().user_id;
  // Earlier specs of this run may have used the partners' windows.
  await redis.del(rateLimitKey(A.client_id), rateLimitKey('sandbox-partner-b'));
}, 240_000);

afterAll(async () => {
  await system?.stop();
  await receiver?.close();
  redis?.disconnect();
  await db?.end();
}, 60_000);

/** Requests `replica`'s access log shows for a path, e.g. to prove both replicas answered. */
function servedBy(app: NestAppName, replica: number, pathPrefix: string): number {
  const file = path.join(system.logDir, `${replica === 0 ? app : `${app}-${replica + 1}`}.log`);
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.includes('"request completed"') && line.includes(`"path":"${pathPrefix}`)).length;
}

/** Event ids the receiver has seen (each delivery's body carries its event's id). */
function receivedEventIds(): Set<string> {
  return new Set(receiver.requests(HOOK).map((r) => (JSON.parse(r.rawBody.toString()) as { id: string }).id));
}

describe('two replicas of every app behind the gateway', () => {
  it('runs two processes of every app, each on its own port', () => {
    expect(system.replicas).toBe(REPLICAS);
    for (const app of APPS) expect(system.replicaPorts[app]).toHaveLength(REPLICAS);
    const ports = APPS.flatMap((app) => system.replicaPorts[app]);
    expect(new Set(ports).size).toBe(ports.length);
  });

  it('serves the crew reads from both replicas: /v1/me, conditional GETs, and one cursor walk across them', async () => {
    const me = await bearer(url('/v1/me'), reader.access_token);
    expect(me.status).toBe(200);
    const etag = me.header('etag');
    expect(etag).toBeTruthy();
    for (let i = 0; i < 4; i++) {
      const again = await bearer(url('/v1/me'), reader.access_token, { 'if-none-match': etag! });
      expect(again.status).toBe(304);
      expect(again.header('etag')).toBe(etag);
    }
    // 120 periods, 25 a page: pages alternate replicas, so each replica reads the other's cursors.
    const ids: string[] = [];
    const asOf = new Set<string>();
    let next: string | null = '';
    for (let page = 0; next !== null && page < 20; page++) {
      const res = await bearer(
        url(`/v1/me/vessels?limit=25${next ? `&cursor=${encodeURIComponent(next)}` : ''}`),
        reader.access_token,
      );
      expect(res.status).toBe(200);
      const body = res.json<{
        vessels: { id: string }[];
        next_cursor: string | null;
        record_updated_at: string;
      }>();
      ids.push(...body.vessels.map((v) => v.id));
      asOf.add(body.record_updated_at);
      next = body.next_cursor;
    }
    expect(next).toBeNull();
    expect(ids).toHaveLength(120);
    expect(new Set(ids).size).toBe(120);
    expect(asOf.size).toBe(1);
    for (let r = 0; r < REPLICAS; r++) {
      expect(servedBy('crew-api', r, '/v1/me')).toBeGreaterThan(0);
      expect(servedBy('crew-api', r, '/v1/me/vessels')).toBeGreaterThan(0);
    }
  });

  it('delivers a test webhook through the replicas to the partner', async () => {
    const res = await bearer(url('/v1/webhooks/test'), reader.access_token);
    expect(res.status).toBe(200);
    const { event_id } = res.json<{ event_id: string }>();
    const deadline = Date.now() + 20_000;
    while (!receivedEventIds().has(event_id) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(receivedEventIds()).toContain(event_id);
  });

  it('admits exactly the limit across both replicas, never more', async () => {
    const extra = 25;
    const statuses: number[] = [];
    const queue = Array.from({ length: RATE_LIMIT_PER_MINUTE + extra }, (_, i) => i);
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (queue.shift() !== undefined) {
          statuses.push((await json(url('/v1/partners/sponsorships?limit=1'), 'GET', BASIC_B)).status);
        }
      }),
    );
    const admitted = statuses.filter((s) => s === 200).length;
    const refused = statuses.filter((s) => s === 429).length;
    // On a starved machine a limiter reply can miss Redis's command timeout: that request fails
    // closed with 503 (it may have been counted, it was not served). Never over the limit, and
    // every slot of the window is either served or taken by such a request; exactly the limit
    // whenever every reply arrived in time.
    const unavailable = statuses.filter((s) => s === 503).length;
    expect(admitted + refused + unavailable).toBe(statuses.length);
    expect(admitted).toBeLessThanOrEqual(RATE_LIMIT_PER_MINUTE);
    expect(admitted).toBeGreaterThanOrEqual(RATE_LIMIT_PER_MINUTE - unavailable);
    if (unavailable === 0)
      expect({ admitted, refused }).toEqual({ admitted: RATE_LIMIT_PER_MINUTE, refused: extra });
    for (let r = 0; r < REPLICAS; r++) {
      expect(servedBy('sponsorship-api', r, '/v1/partners/sponsorships')).toBeGreaterThan(20);
    }
  });

  it('refuses a rotated or revoked token on every replica at once', async () => {
    const pair = await authorize(system, 'alex.morgan@sandbox.test', 'profile:read');
    const crew = (r: number) => `${system.appUrl('crew-api', r)}/v1/me`;
    const auth = (r: number) => system.appUrl('auth-server', r);
    // Both crew-api replicas have the token's introspection cached.
    for (let r = 0; r < REPLICAS; r++) expect((await bearer(crew(r), pair.access_token)).status).toBe(200);

    // Rotated on auth-server replica 0: the old access token is refused by every crew-api replica,
    // and the old refresh token by auth-server replica 1.
    const rotated = await refresh(auth(0), pair.refresh_token);
    expect(rotated.status).toBe(200);
    const next = rotated.json<TokenPair>();
    for (let r = 0; r < REPLICAS; r++) expect((await bearer(crew(r), pair.access_token)).status).toBe(401);
    expect((await refresh(auth(1), pair.refresh_token)).status).toBe(400);

    for (let r = 0; r < REPLICAS; r++) expect((await bearer(crew(r), next.access_token)).status).toBe(200);
    // Revoked on auth-server replica 1: refused at once by both crew-api replicas and by replica 0.
    const revoked = await postForm(`${auth(1)}/oauth/revoke`, {
      token: next.access_token,
      client_id: A.client_id,
      client_secret: A.client_secret,
    });
    expect(revoked.status).toBe(200);
    for (let r = 0; r < REPLICAS; r++) expect((await bearer(crew(r), next.access_token)).status).toBe(401);
    expect((await refresh(auth(0), next.refresh_token)).status).toBe(400);
  });
});

/** What the load saw: every request's method, path pattern and outcome. */
interface Outcome {
  readonly method: string;
  readonly what: string;
  readonly status: number;
  /** The answer the request was meant to get. */
  readonly ok: boolean;
  readonly error?: string;
}

interface LoadSeat {
  readonly email: string;
  readonly provision: number;
  id?: string;
  remove?: number;
}

/**
 * A small steady mixed load: crew reads (/v1/me, two pages of /v1/me/vessels), token refreshes,
 * the consent UI's sign-in page, seat provision + remove, and record changes through the internal
 * API whose webhooks go to the receiver. Metered requests are paced under the partner's limit.
 */
class Load {
  readonly outcomes: Outcome[] = [];
  readonly seats: LoadSeat[] = [];
  /** record_updated_at of every record change that answered 200. */
  readonly changes: string[] = [];
  private running = true;
  private workers: Promise<void>[] = [];
  private nextSlot = Date.now();
  private n = 0;

  constructor(
    private readonly sys: RunningSystem,
    private readonly readToken: string,
    private readonly tag: string,
  ) {}

  /** Each worker refreshes its own token chain (sam.lee's), so refreshes never race each other. */
  async start(workers = 2): Promise<void> {
    const chains = await Promise.all(
      Array.from({ length: workers }, () => authorize(this.sys, 'sam.lee@sandbox.test', 'profile:read')),
    );
    this.workers = chains.map((chain) => this.work(chain));
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.workers);
  }

  failures(filter: (o: Outcome) => boolean = () => true): Outcome[] {
    return this.outcomes.filter((o) => filter(o) && !o.ok);
  }

  /** At most one metered request per 350 ms: ~171 a minute, under the limit of 200. */
  private async metered(): Promise<void> {
    const at = Math.max(Date.now(), this.nextSlot);
    this.nextSlot = at + 350;
    await new Promise((r) => setTimeout(r, at - Date.now()));
  }

  private async call(
    method: string,
    what: string,
    expected: number,
    send: () => Promise<HttpResponse>,
  ): Promise<HttpResponse | undefined> {
    try {
      const res = await send();
      const ok = res.status === expected;
      this.outcomes.push({
        method,
        what,
        status: res.status,
        ok,
        ...(ok ? {} : { error: res.text.slice(0, 300) }),
      });
      return res;
    } catch (err) {
      this.outcomes.push({ method, what, status: 0, ok: false, error: (err as Error).message });
      return undefined;
    }
  }

  private async work(first: TokenPair): Promise<void> {
    let chain = first;
    const base = this.sys.baseUrl;
    while (this.running) {
      const n = ++this.n;
      await this.metered();
      await this.call('GET', '/v1/me', 200, () => bearer(`${base}/v1/me`, this.readToken));
      await this.metered();
      const page = await this.call('GET', '/v1/me/vessels', 200, () =>
        bearer(`${base}/v1/me/vessels?limit=40`, this.readToken),
      );
      const cursor = page?.status === 200 ? page.json<{ next_cursor: string | null }>().next_cursor : null;
      if (cursor) {
        await this.metered();
        await this.call('GET', '/v1/me/vessels', 200, () =>
          bearer(`${base}/v1/me/vessels?limit=40&cursor=${encodeURIComponent(cursor)}`, this.readToken),
        );
      }
      await this.call('GET', '/login', 200, () => request(`${base}/login`, { timeoutMs: 30_000 }));

      const rotated = await this.call('POST', '/oauth/token', 200, () => refresh(base, chain.refresh_token));
      if (rotated?.status === 200) chain = rotated.json<TokenPair>();
      else {
        // A refresh whose answer was lost may have rotated the pair: start a new chain.
        chain = await this.retry(() => authorize(this.sys, 'sam.lee@sandbox.test', 'profile:read'));
      }

      const email = `scale-${this.tag}-${n}@example.test`;
      await this.metered();
      const provisioned = await this.call('POST', '/v1/partners/sponsorships', 201, () =>
        json(`${base}/v1/partners/sponsorships`, 'POST', BASIC_A, { email }),
      );
      const seat: LoadSeat = { email, provision: provisioned?.status ?? 0 };
      this.seats.push(seat);
      if (provisioned?.status === 201) {
        seat.id = provisioned.json<{ sponsorship_id: string }>().sponsorship_id;
        await this.metered();
        const removed = await this.call('DELETE', '/v1/partners/sponsorships/{id}', 200, () =>
          json(`${base}/v1/partners/sponsorships/${seat.id}`, 'DELETE', BASIC_A),
        );
        seat.remove = removed?.status ?? 0;
      }

      const changed = await this.call('PATCH', '/internal/v1/crew/{id}/profile', 200, () =>
        json(`${base}/internal/v1/crew/${joUserId}/profile`, 'PATCH', INTERNAL, {
          role: `Scale ${this.tag} ${n}`,
        }),
      );
      if (changed?.status === 200)
        this.changes.push(changed.json<{ record_updated_at: string }>().record_updated_at);
    }
  }

  private async retry<T>(attempt: () => Promise<T>): Promise<T> {
    for (let i = 1; ; i++) {
      try {
        return await attempt();
      } catch (err) {
        if (i >= 10) throw err;
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }
}

/** Every seat of sandbox-partner whose e-mail starts with `prefix`, by e-mail. */
async function seatsByEmail(
  prefix: string,
): Promise<Map<string, { sponsorship_id: string; status: string }[]>> {
  const found = new Map<string, { sponsorship_id: string; status: string }[]>();
  let cursor: string | null = null;
  do {
    const res = await json(
      url(`/v1/partners/sponsorships?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`),
      'GET',
      BASIC_A,
    );
    expect(res.status).toBe(200);
    const body = res.json<{
      items: { sponsorship_id: string; status: string; email: string }[];
      next_cursor: string | null;
    }>();
    for (const seat of body.items.filter((s) => s.email.startsWith(prefix))) {
      found.set(seat.email, [...(found.get(seat.email) ?? []), seat]);
    }
    cursor = body.next_cursor;
  } while (cursor);
  return found;
}

/** Checks the seats the load touched, and that every record change's event reached the receiver. */
async function expectConsistent(load: Load, tag: string, since: Date): Promise<void> {
  const seats = await seatsByEmail(`scale-${tag}-`);
  for (const seat of load.seats) {
    const there = seats.get(seat.email) ?? [];
    // Never two seats for one e-mail, and never a seat without its answer's effect.
    expect(there.length).toBeLessThanOrEqual(1);
    if (seat.provision === 201) {
      expect(there.map((s) => s.sponsorship_id)).toEqual([seat.id]);
      expect(there[0].status).toEqual(
        seat.remove === 200 ? 'cancelled' : expect.stringMatching(/^(invited|cancelled)$/),
      );
    } else if (there.length === 1) {
      expect(['invited', 'cancelled']).toContain(there[0].status);
    }
  }

  // Every user.profile.updated event committed for jo.kim since the load began reaches the partner.
  const { rows } = await db.query<{ message_id: string; created_at: Date }>(
    `SELECT message_id FROM crew.outbox_messages
      WHERE routing_key = 'user.profile.updated' AND payload->>'user_id' = $1 AND created_at >= $2`,
    [joUserId, since],
  );
  expect(rows.length).toBeGreaterThanOrEqual(load.changes.length);
  const want = rows.map((r) => r.message_id);
  const deadline = Date.now() + 45_000;
  let missing = want.filter((id) => !receivedEventIds().has(id));
  while (missing.length && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 500));
    missing = want.filter((id) => !receivedEventIds().has(id));
  }
  expect(missing).toEqual([]);
}

describe('replicas failing under a steady mixed load', () => {
  it('loses no idempotent request, no webhook event and no seat change when one replica of each app is killed in turn', async () => {
    const tag = `k${randomBytes(3).toString('hex')}`;
    const since = new Date(Date.now() - 1000);
    await redis.del(rateLimitKey(A.client_id));
    const load = new Load(system, reader.access_token, tag);
    await load.start();
    // One replica of each app in turn, while the one before is still down (the other replica of
    // every app stays up); then all come back at once, under the same load.
    for (const [i, app] of APPS.entries()) {
      await new Promise((r) => setTimeout(r, 1500));
      await system.stopReplica(app, i % REPLICAS, 'SIGKILL');
    }
    await new Promise((r) => setTimeout(r, 1500));
    await Promise.all(APPS.map((app, i) => system.startReplica(app, i % REPLICAS)));
    await new Promise((r) => setTimeout(r, 1500));
    await load.stop();

    const idempotent = (o: Outcome) => ['GET', 'HEAD', 'PUT', 'DELETE'].includes(o.method);
    expect(load.failures(idempotent)).toEqual([]);
    expect(load.outcomes.length).toBeGreaterThan(50);
    expect(load.changes.length).toBeGreaterThan(3);
    await expectConsistent(load, tag, since);
  }, 150_000);

  it('fails no request at all, POSTs included, while every replica is restarted one by one (SIGTERM)', async () => {
    const tag = `r${randomBytes(3).toString('hex')}`;
    const since = new Date(Date.now() - 1000);
    await redis.del(rateLimitKey(A.client_id));
    const load = new Load(system, reader.access_token, tag);
    await load.start();
    // Every app rolls at once, as a deployment of all of them would: one replica of each is
    // stopped (drained), started again and ready before the next replica of that app goes. The
    // load runs a moment before and after the roll too, so a quick roll still sees a real load.
    await new Promise((r) => setTimeout(r, 1500));
    for (let replica = 0; replica < REPLICAS; replica++) {
      await Promise.all(
        APPS.map(async (app) => {
          await system.stopReplica(app, replica, 'SIGTERM');
          await system.startReplica(app, replica);
        }),
      );
    }
    await new Promise((r) => setTimeout(r, 1500));
    await load.stop();

    expect(load.failures()).toEqual([]);
    expect(load.outcomes.length).toBeGreaterThan(50);
    await expectConsistent(load, tag, since);
  }, 180_000);
});
