import http from 'node:http';
import https from 'node:https';
import { Inject, Injectable, Optional, type OnModuleDestroy } from '@nestjs/common';
import { APP_CONFIG, checkTarget, type AppEnv, type Resolver } from '@svc/platform';
import type { WebhookDispatcherConfig } from '../config';
import { PartnerSlots } from './partner-slots';
import { pinnedLookup } from './target-guard';
import { dnsResolver } from './webhook-resolver';

export interface WebhookRequest {
  /** The partner: its name lookups in flight are capped (WEBHOOK_DNS_LOOKUPS_PER_PARTNER). */
  readonly clientId: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** The whole attempt from the call on: DNS, a connection, the request and the answer. */
  readonly timeoutMs: number;
}

export interface WebhookOutcome {
  readonly ok: boolean;
  readonly statusCode: number | null;
  readonly error: string | null;
  /** The first RESPONSE_BODY_KEPT bytes of the answer as text (the partner's own debugging aid). */
  readonly responseBody?: string | null;
}

/** Response bodies are read only this far: enough to log, never enough to exhaust memory. */
export const RESPONSE_BODY_CAP = 4096;
/** What the delivery log keeps of a response body (partners see it in the attempt). */
export const RESPONSE_BODY_KEPT = 1024;

/** Where the guard resolves names; tests replace it to play a rebinding or a hanging DNS. */
export const TARGET_RESOLVER = Symbol('TARGET_RESOLVER');

/** An attempt whose budget ran out before it had an answer (in DNS, connecting or reading). */
const TIMED_OUT: WebhookOutcome = { ok: false, statusCode: null, error: 'timeout' };

/**
 * One POST. The target passes the SSRF guard first, and the connection is pinned to the addresses
 * the guard approved (no second resolution), while Host and TLS keep the partner's hostname. The
 * timeout covers the whole attempt, waiting for a connection included, so an attempt never
 * outlives the lease it runs under; redirects are never followed (a 3xx is a failure).
 * Connections are kept alive per origin (a pooled socket was pinned when it was opened), at most
 * WEBHOOK_CONNECTIONS_PER_TARGET, all kept for reuse: a partner is never flooded with connections,
 * and a burst reuses them instead of opening and closing hundreds (docs/architecture.md).
 */
@Injectable()
export class WebhookSender implements OnModuleDestroy {
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;
  private readonly resolve: Resolver;
  private readonly lookups: PartnerSlots;

  constructor(
    @Inject(APP_CONFIG)
    private readonly config: { readonly APP_ENV: AppEnv } & Pick<
      WebhookDispatcherConfig,
      | 'WEBHOOK_CONNECTIONS_PER_TARGET'
      | 'WEBHOOK_TIMEOUT_MS'
      | 'WEBHOOK_DNS_LOOKUPS_PER_PARTNER'
      | 'WEBHOOK_DNS_SERVERS'
    >,
    @Optional() @Inject(TARGET_RESOLVER) resolver?: Resolver,
  ) {
    // Two tries of a third of the budget each (c-ares doubles the second): one server's answer
    // or its failure within one budget.
    this.resolve =
      resolver ?? dnsResolver(Math.ceil(config.WEBHOOK_TIMEOUT_MS / 3), config.WEBHOOK_DNS_SERVERS);
    this.lookups = new PartnerSlots(config.WEBHOOK_DNS_LOOKUPS_PER_PARTNER);
    const pool = {
      keepAlive: true,
      maxSockets: config.WEBHOOK_CONNECTIONS_PER_TARGET,
      maxFreeSockets: config.WEBHOOK_CONNECTIONS_PER_TARGET,
    };
    this.httpAgent = new http.Agent(pool);
    this.httpsAgent = new https.Agent(pool);
  }

  async post(request: WebhookRequest): Promise<WebhookOutcome> {
    const deadline = Date.now() + request.timeoutMs;
    let spent = false;
    const verdict = await checkTarget(request.url, this.config.APP_ENV, (hostname) =>
      this.lookup(request.clientId, hostname, deadline).catch((err: unknown) => {
        spent = err instanceof BudgetSpent;
        throw err;
      }),
    );
    if (spent || Date.now() >= deadline) return TIMED_OUT;
    if (!verdict.ok) return { ok: false, statusCode: null, error: `target refused: ${verdict.reason}` };
    try {
      const { statusCode, body } = await this.exchange(verdict.url, verdict.addresses, request, deadline);
      const ok = statusCode >= 200 && statusCode < 300;
      return { ok, statusCode, error: ok ? null : `HTTP ${statusCode}`, responseBody: body };
    } catch (err) {
      return { ok: false, statusCode: null, error: describe(err) };
    }
  }

  onModuleDestroy(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }

  /**
   * A name's addresses by `deadline`, as one of the partner's lookups in flight: waiting for a
   * free one spends the attempt's budget too. The lookup keeps its place until it ends itself
   * (c-ares gives up within about a budget), even once the attempt stopped waiting for it.
   */
  private async lookup(clientId: string, hostname: string, deadline: number): Promise<readonly string[]> {
    const release = await this.lookups.take(clientId, Math.max(0, deadline - Date.now()));
    if (!release) throw new BudgetSpent();
    const answer = this.resolve(hostname);
    void answer.then(release, release);
    let timer: NodeJS.Timeout | undefined;
    const cut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new BudgetSpent()), Math.max(0, deadline - Date.now()));
    });
    return Promise.race([answer, cut]).finally(() => clearTimeout(timer));
  }

  /**
   * The budget is one timer that destroys the request (a plain timer: an AbortSignal per attempt
   * cost several times as much under load).
   */
  private exchange(
    url: URL,
    addresses: readonly string[],
    request: WebhookRequest,
    deadline: number,
  ): Promise<{ statusCode: number; body: string }> {
    const secure = url.protocol === 'https:';
    const body = Buffer.from(request.body, 'utf8');
    let timer: NodeJS.Timeout | undefined;
    let spent = false;
    return new Promise<{ statusCode: number; body: string }>((resolve, fail) => {
      const reject = (err: unknown) => fail(spent ? new BudgetSpent() : err);
      const req = (secure ? https : http).request(url, {
        method: 'POST',
        headers: { ...request.headers, 'content-length': String(body.length) },
        agent: secure ? this.httpsAgent : this.httpAgent,
        lookup: pinnedLookup(addresses),
      });
      timer = setTimeout(() => {
        spent = true;
        req.destroy(new BudgetSpent());
      }, deadline - Date.now());
      req.once('error', reject);
      req.once('response', (response) => {
        const status = response.statusCode ?? 0;
        let read = 0;
        const kept: Buffer[] = [];
        const answer = () => ({
          statusCode: status,
          // Most receivers answer with no body: no buffer to build then.
          body: kept.length === 0 ? '' : responseText(Buffer.concat(kept).subarray(0, RESPONSE_BODY_KEPT)),
        });
        response.on('data', (chunk: Buffer) => {
          if (read < RESPONSE_BODY_KEPT) kept.push(chunk.subarray(0, RESPONSE_BODY_KEPT - read));
          read += chunk.length;
          // Enough of the answer: drop the connection rather than read the rest.
          if (read >= RESPONSE_BODY_CAP) {
            response.destroy();
            resolve(answer());
          }
        });
        response.once('end', () => resolve(answer()));
        response.once('error', reject);
      });
      req.end(body);
    }).finally(() => clearTimeout(timer));
  }
}

/** The attempt's budget ran out (connect, headers or body). */
class BudgetSpent extends Error {
  constructor() {
    super('timeout');
  }
}

/**
 * Whatever bytes a partner answers, as text PostgreSQL takes: lossy on purpose. Bytes that are not
 * UTF-8 (a cut multi-byte character, a binary answer) decode to U+FFFD, and so does NUL, which a
 * `text` column refuses (the row, and every row written with it, would fail). JavaScript strings
 * decoded from bytes hold no lone surrogate, so nothing else can fail the write.
 */
export function responseText(bytes: Buffer): string {
  return bytes.toString('utf8').replace(/\0/g, '\uFFFD');
}

/** Node's error codes an attempt can end with, by the kind the delivery log shows partners. */
const KIND_OF_CODE: readonly [RegExp, string][] = [
  [/^ECONNREFUSED$/, 'connection_refused'],
  [/^(ECONNRESET|EPIPE|ECONNABORTED|UND_ERR_SOCKET)$/, 'connection_reset'],
  [/^(ENOTFOUND|EAI_AGAIN|EAI_FAIL|EAI_NODATA|EAI_NONAME)$/, 'dns'],
  [/^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|ERR_OSSL_)/, 'tls'],
];

/**
 * What the log records of an attempt that got no answer: a fixed kind and Node's error code, never
 * the error's message (it can carry a library's or a peer's free text, addresses included).
 */
function describe(err: unknown): string {
  if (err instanceof BudgetSpent) return 'timeout';
  const code = errorCode(err) ?? errorCode((err as { cause?: unknown } | null)?.cause);
  if (code === undefined) {
    return err instanceof Error && /socket hang up/i.test(err.message) ? 'connection_reset' : 'other';
  }
  const kind = KIND_OF_CODE.find(([pattern]) => pattern.test(code))?.[1] ?? 'other';
  return `${kind} (${code})`;
}

function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Z0-9_]{1,64}$/.test(code) ? code : undefined;
}
