import { randomBytes } from 'node:crypto';
import { sleep } from '../../scripts/lib/net.cjs';
import { basicAuthorization } from '../support/factories';
import { request, type HttpResponse } from '../support/http';
import type { TokenPair } from '../support/oauth/token-pairs';

/**
 * Steady mixed load on the gateway, as partners and the records system make it, with every
 * request's latency and outcome kept. An outcome is `ok` (the answer the request wants),
 * `unavailable` (a well-formed 503: a `service_unavailable` Problem on /v1/* and /internal/*, an
 * RFC 6749 `temporarily_unavailable` error on /oauth/*, and on a provision the interface's own
 * answer for a dependency that failed it: 502 `entitlement_write_failed`, the seat released and the
 * request safe to retry) or `failure` (anything else: a 500, another 502, a 504, a 401 for a live token, a malformed 503, a contract violation, no answer within the
 * client timeout, or any answer slower than MAX_LATENCY_MS).
 */
export const MAX_LATENCY_MS = 3000;
export const CLIENT_TIMEOUT_MS = 3500;

export const KINDS = [
  'me',
  'sea_time',
  'vessels',
  'token_refresh',
  'revoke',
  'revoked_probe',
  'sponsorship_list',
  'sponsorship_provision',
  'sponsorship_remove',
  'record_change',
] as const;
export type Kind = (typeof KINDS)[number];

/** The crew reads of the mix, by kind. */
const CREW_READS = { me: '/v1/me', sea_time: '/v1/me/sea-time', vessels: '/v1/me/vessels?limit=5' } as const;

/** The kinds that must all succeed again before a dependency counts as recovered: all but the revocations'. */
export const RECOVERY_KINDS: readonly Kind[] = KINDS.filter((k) => k !== 'revoke' && k !== 'revoked_probe');

/**
 * `refused`: a 401 for a token whose revocation or rotation answered 503. auth-server writes the
 * cache tombstone before it commits (so that a revoked token is never accepted); when the commit
 * then fails, the answer is 503 and the token stays live in the database but refused by the
 * resource servers until the tombstone expires (120 s) or the client refreshes. Fail-safe, not a
 * success: counted apart and reported, never folded into `ok`.
 */
export type Outcome = 'ok' | 'unavailable' | 'refused' | 'failure';

export interface Sample {
  readonly kind: Kind;
  readonly startedAt: number;
  readonly endedAt: number;
  readonly ms: number;
  readonly status: number;
  readonly outcome: Outcome;
  readonly detail?: string;
  /** Which worker made it (-1: a scheduled revocation or the warm-up), with which token. */
  readonly worker: number;
  readonly token?: string;
}

export interface RevokedAcceptance {
  readonly token: string;
  readonly how: 'revoked' | 'rotated';
  readonly revokedAt: number;
  readonly startedAt: number;
  readonly kind: Kind;
}

/** The status a kind wants: 200, but for a revoked token's 401 and a provision's 201. */
const EXPECTED: Partial<Record<Kind, number>> = { revoked_probe: 401, sponsorship_provision: 201 };

const PARTNER_AUTH = { authorization: basicAuthorization('sandbox-partner', 'sandbox-secret') };
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const JSON_BODY = { 'content-type': 'application/json' };
const INTERNAL_TOKEN = 'sandbox-internal-token';
export const RECORD_USER_ID = 'usr_sandbox_alex_morgan';

const WEIGHTS: [Kind, number][] = [
  ['me', 22],
  ['sea_time', 14],
  ['vessels', 14],
  ['token_refresh', 5],
  ['revoked_probe', 10],
  ['sponsorship_list', 10],
  ['sponsorship_provision', 7],
  ['record_change', 12],
];
const WEIGHT_SUM = WEIGHTS.reduce((n, [, w]) => n + w, 0);

let random = Math.random;
/**
 * The mix's random choices come from a seeded generator (FAULTS_SEED), so a run can be repeated
 * request kind for request kind as far as timing allows.
 */
export function seedLoad(seed: number): void {
  let a = seed >>> 0;
  random = () => {
    // mulberry32
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pickKind(): Kind {
  let r = random() * WEIGHT_SUM;
  for (const [kind, w] of WEIGHTS) {
    r -= w;
    if (r < 0) return kind;
  }
  return 'me';
}

interface Worker {
  readonly id: number;
  pair: TokenPair;
  seats: string[];
  /** Its access token was refused after an unconfirmed rotation: refresh next, as a client does. */
  mustRefresh?: boolean;
}

/** One request of the load; `token` goes as `Authorization: Bearer` and is followed through the samples. */
interface Call {
  readonly kind: Kind;
  readonly method?: string;
  readonly path: string;
  readonly token?: string;
  readonly headers?: Record<string, string>;
  readonly body?: string;
  /** Which worker makes it (-1: a scheduled revocation or the warm-up). */
  readonly worker?: number;
}

/** Enough of a token to follow it through a run's samples. */
const fingerprint = (token: string) => token.slice(0, 11);

export class LoadGenerator {
  readonly samples: Sample[] = [];
  readonly revokedAcceptances: RevokedAcceptance[] = [];
  /** Access tokens whose revocation (or rotation) answered 200, with the time of that answer. */
  private readonly revoked = new Map<string, { at: number; how: 'revoked' | 'rotated' }>();
  private readonly revokedList: string[] = [];
  /** Access tokens whose revocation or rotation answered 503: live or not, nobody can tell yet. */
  private readonly unconfirmed = new Set<string>();
  private readonly workerById = new Map<number, Worker>();
  private running = false;
  private loops: Promise<void>[] = [];
  private changeCounter = 0;
  recordChangesCommitted = 0;

  constructor(
    private readonly baseUrl: string,
    private readonly workers: number,
    private readonly spares: TokenPair[],
    readonly thinkMs: number,
  ) {}

  /**
   * A few requests of every kind, one after the other, before anything is measured: the first
   * answers of freshly started processes (JIT, connection pools) are no fault of a dependency.
   */
  async warmUp(pairs: TokenPair[], rounds = 3): Promise<void> {
    const worker: Worker = { id: -1, pair: pairs[0], seats: [] };
    const saved = random;
    for (let i = 0; i < rounds; i++) {
      for (const kind of RECOVERY_KINDS.filter((k) => k !== 'token_refresh' && k !== 'sponsorship_remove')) {
        random = () => 0.99; // the provision stays a provision
        await this.step(worker, kind);
      }
      random = saved;
      await this.step(worker, 'sponsorship_remove');
    }
    random = saved;
    this.samples.length = 0;
    this.recordChangesCommitted = 0;
  }

  start(pairs: TokenPair[]): void {
    if (pairs.length < this.workers) throw new Error(`${this.workers} workers need as many token pairs`);
    this.running = true;
    this.loops = pairs.slice(0, this.workers).map((pair, id) => {
      const worker: Worker = { id, pair, seats: [] };
      this.workerById.set(id, worker);
      return this.loop(worker);
    });
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  /**
   * Revokes a token the way a partner does (RFC 7009, client authentication by Basic), after one
   * successful read with it (so that its introspection answer sits in the cache). Returns the
   * status of the revocation: 200 makes the token one that must never be accepted again.
   */
  async revoke(pair: TokenPair): Promise<number> {
    // A retry after a 503 reads nothing first: the token may be refused already (see Outcome).
    if (!this.unconfirmed.has(pair.access_token)) {
      await this.call({ kind: 'me', path: '/v1/me', token: pair.access_token });
    }
    const res = await this.call({
      kind: 'revoke',
      method: 'POST',
      path: '/oauth/revoke',
      headers: { ...PARTNER_AUTH, ...FORM },
      body: new URLSearchParams({ token: pair.access_token, token_type_hint: 'access_token' }).toString(),
    });
    if (res?.status === 200) this.markRevoked(pair.access_token, 'revoked');
    else this.unconfirmed.add(pair.access_token);
    return res?.status ?? 0;
  }

  revokedCount(): number {
    return this.revokedList.length;
  }

  private markRevoked(token: string, how: 'revoked' | 'rotated'): void {
    if (this.revoked.has(token)) return;
    this.revoked.set(token, { at: Date.now(), how });
    this.revokedList.push(token);
  }

  private async loop(worker: Worker): Promise<void> {
    // Spread the workers' first requests.
    await sleep(Math.random() * this.thinkMs);
    while (this.running) {
      await this.step(worker).catch(() => undefined);
      await sleep(this.thinkMs);
    }
  }

  private async step(worker: Worker, forced?: Kind): Promise<void> {
    let kind = forced ?? pickKind();
    if (worker.mustRefresh && !forced) {
      kind = 'token_refresh';
      worker.mustRefresh = false;
    }
    if (kind === 'revoked_probe' && this.revokedList.length === 0) kind = 'me';
    if (kind === 'sponsorship_provision' && worker.seats.length > 0 && random() < 0.5) {
      kind = 'sponsorship_remove';
    }
    if (kind === 'sponsorship_remove' && worker.seats.length === 0) return;
    const call = (c: Omit<Call, 'kind' | 'worker'>) => this.call({ kind, worker: worker.id, ...c });
    switch (kind) {
      case 'me':
      case 'sea_time':
      case 'vessels':
        await call({ path: CREW_READS[kind], token: worker.pair.access_token });
        return;
      case 'revoked_probe': {
        const token = this.revokedList[Math.floor(random() * this.revokedList.length)];
        await call({ path: '/v1/me', token });
        return;
      }
      case 'token_refresh': {
        const old = worker.pair;
        const res = await call({
          method: 'POST',
          path: '/oauth/token',
          headers: { ...PARTNER_AUTH, ...FORM },
          body: new URLSearchParams({
            grant_type: 'refresh_token',
            refresh_token: old.refresh_token,
          }).toString(),
        });
        if (res?.status === 200) {
          worker.pair = res.json<TokenPair>();
          this.markRevoked(old.access_token, 'rotated');
        } else if (res?.status === 503) {
          this.unconfirmed.add(old.access_token);
        } else {
          // Unknown state of the pair (no answer, or refused): carry on with a spare one.
          const spare = this.spares.shift();
          if (spare) worker.pair = spare;
        }
        return;
      }
      case 'sponsorship_list':
        await call({ path: '/v1/partners/sponsorships?limit=5', headers: PARTNER_AUTH });
        return;
      case 'sponsorship_provision': {
        const email = `faults-${randomBytes(6).toString('hex')}@example.test`;
        const res = await call({
          method: 'POST',
          path: '/v1/partners/sponsorships',
          headers: { ...PARTNER_AUTH, ...JSON_BODY },
          body: JSON.stringify({ email, external_ref: `faults-${email}` }),
        });
        if (res?.status === 201) worker.seats.push(res.json<{ sponsorship_id: string }>().sponsorship_id);
        return;
      }
      case 'sponsorship_remove': {
        const path = `/v1/partners/sponsorships/${worker.seats[0]}`;
        const res = await call({ method: 'DELETE', path, headers: PARTNER_AUTH });
        if (res?.status === 200 || res?.status === 404) worker.seats.shift();
        return;
      }
      case 'record_change': {
        this.changeCounter += 1;
        const res = await call({
          method: 'PATCH',
          path: `/internal/v1/crew/${RECORD_USER_ID}/profile`,
          headers: { authorization: `Bearer ${INTERNAL_TOKEN}`, ...JSON_BODY },
          body: JSON.stringify({
            role: `Chief Officer ${this.changeCounter}-${randomBytes(2).toString('hex')}`,
          }),
        });
        if (res?.status === 200) this.recordChangesCommitted += 1;
        return;
      }
      case 'revoke': // made on schedule by revoke(), never by the mix
        return;
    }
  }

  /** One request: timed, classified, kept. Resolves with the response, or undefined without one. */
  private async call({ kind, method = 'GET', path, token, headers = {}, body, worker = -1 }: Call) {
    const startedAt = Date.now();
    let res: HttpResponse | undefined;
    let status = 0;
    let outcome: Outcome;
    let detail: string | undefined;
    try {
      res = await request(`${this.baseUrl}${path}`, {
        method,
        headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
        body,
        timeoutMs: CLIENT_TIMEOUT_MS,
      });
      status = res.status;
      ({ outcome, detail } = classify(kind, path, res));
    } catch (err) {
      outcome = 'failure';
      detail = (err as Error).message.slice(0, 300);
    }
    const endedAt = Date.now();
    const ms = endedAt - startedAt;
    if (outcome !== 'failure' && ms > MAX_LATENCY_MS) {
      outcome = 'failure';
      detail = `answered ${status} after ${ms} ms`;
    }
    if (outcome === 'failure' && status === 401 && token && this.unconfirmed.has(token)) {
      outcome = 'refused';
      detail = 'refused after its revocation or rotation answered 503';
      const owner = this.workerById.get(worker);
      if (owner) owner.mustRefresh = true;
    }
    if (token && status === 200) {
      const revoked = this.revoked.get(token);
      if (revoked && revoked.at < startedAt) {
        this.revokedAcceptances.push({
          token: token.slice(0, 10),
          how: revoked.how,
          revokedAt: revoked.at,
          startedAt,
          kind,
        });
      }
    }
    const refreshed =
      kind === 'token_refresh' && body ? new URLSearchParams(body).get('refresh_token') : null;
    const followed = token ?? refreshed ?? undefined;
    this.samples.push({
      kind,
      startedAt,
      endedAt,
      ms,
      status,
      outcome,
      worker,
      ...(followed ? { token: fingerprint(followed) } : {}),
      ...(detail ? { detail } : {}),
    });
    return res;
  }
}

/**
 * The moment after which every kind of request succeeds again after a dependency returned at
 * `upAt`: the end of the last non-success among requests started since, followed by a success of
 * every RECOVERY_KINDS kind; undefined while some kind has not succeeded since. Revocations are left
 * out (their 503s are retried separately).
 */
export function recoveredAt(samples: readonly Sample[], upAt: number): number | undefined {
  let lastBad = upAt;
  for (const s of samples)
    if (s.startedAt >= upAt && s.outcome !== 'ok' && s.outcome !== 'refused' && s.kind !== 'revoke')
      lastBad = Math.max(lastBad, s.endedAt);
  let at = lastBad;
  for (const kind of RECOVERY_KINDS) {
    const first = samples.find((s) => s.kind === kind && s.startedAt >= lastBad && s.outcome === 'ok');
    if (!first) return undefined;
    at = Math.max(at, first.endedAt);
  }
  return at;
}

function bodyOf(res: HttpResponse): Record<string, unknown> {
  try {
    return res.json();
  } catch {
    return {}; // not JSON
  }
}

export function classify(kind: Kind, path: string, res: HttpResponse): { outcome: Outcome; detail?: string } {
  if (res.status === (EXPECTED[kind] ?? 200)) return { outcome: 'ok' };
  const contentType = res.header('content-type') ?? '';
  const body = bodyOf(res);
  const type = typeof body.type === 'string' ? body.type : '';
  if (res.status === 502 && kind === 'sponsorship_provision') {
    // Premium could not be granted because crew-api did not answer: the interface's 502, with
    // nothing billed and nothing kept. Any other 502 (the gateway's) is a failure.
    if (contentType.startsWith('application/problem+json') && type.endsWith('/entitlement_write_failed')) {
      return { outcome: 'unavailable' };
    }
  }
  if (res.status === 503) {
    if (path.startsWith('/oauth/')) {
      if (contentType.startsWith('application/json') && body.error === 'temporarily_unavailable') {
        return { outcome: 'unavailable' };
      }
    } else if (contentType.startsWith('application/problem+json') && type.endsWith('/service_unavailable')) {
      return { outcome: 'unavailable' };
    }
    return { outcome: 'failure', detail: `malformed 503 (${contentType}): ${res.text.slice(0, 200)}` };
  }
  return { outcome: 'failure', detail: `${res.status} ${res.text.slice(0, 240)}` };
}
