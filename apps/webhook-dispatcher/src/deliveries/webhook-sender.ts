import http from 'node:http';
import https from 'node:https';
import { Inject, Injectable, Optional, type OnModuleDestroy } from '@nestjs/common';
import { APP_CONFIG, type AppEnv } from '@svc/platform';
import { checkTarget, pinnedLookup, type Resolver } from './target-guard';

export interface WebhookRequest {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
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

/** Where the guard resolves names; tests replace it to play a rebinding DNS. */
export const TARGET_RESOLVER = Symbol('TARGET_RESOLVER');

/**
 * One POST. The target passes the SSRF guard first, and the connection is pinned to the addresses
 * the guard approved (no second resolution), while Host and TLS keep the partner's hostname. The
 * timeout covers the whole exchange (connect, headers and reading the body), redirects are never
 * followed (a 3xx is a failure), and at most RESPONSE_BODY_CAP bytes of the answer are read.
 * Connections are kept alive per origin: a pooled socket was pinned when it was opened.
 *
 * At most WEBHOOK_CONNECTIONS_PER_TARGET connections per origin, all of them kept for reuse: a
 * partner is never flooded with connections, and a burst reuses them instead of opening and
 * closing hundreds (docs/architecture.md). An attempt waiting for a connection spends its own budget.
 */
@Injectable()
export class WebhookSender implements OnModuleDestroy {
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;

  constructor(
    @Inject(APP_CONFIG)
    private readonly config: { readonly APP_ENV: AppEnv; readonly WEBHOOK_CONNECTIONS_PER_TARGET: number },
    @Optional() @Inject(TARGET_RESOLVER) private readonly resolver?: Resolver,
  ) {
    const pool = {
      keepAlive: true,
      maxSockets: config.WEBHOOK_CONNECTIONS_PER_TARGET,
      maxFreeSockets: config.WEBHOOK_CONNECTIONS_PER_TARGET,
    };
    this.httpAgent = new http.Agent(pool);
    this.httpsAgent = new https.Agent(pool);
  }

  async post(request: WebhookRequest): Promise<WebhookOutcome> {
    const verdict = await checkTarget(request.url, this.config.APP_ENV, this.resolver);
    if (!verdict.ok) return { ok: false, statusCode: null, error: `target refused: ${verdict.reason}` };
    try {
      const { statusCode, body } = await this.exchange(verdict.url, verdict.addresses, request);
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
   * The budget is one timer that destroys the request (a plain timer: an AbortSignal per attempt
   * cost several times as much under load).
   */
  private exchange(
    url: URL,
    addresses: readonly string[],
    request: WebhookRequest,
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
      }, request.timeoutMs);
      req.once('error', reject);
      req.once('response', (response) => {
        const status = response.statusCode ?? 0;
        let read = 0;
        const kept: Buffer[] = [];
        // Lossy on purpose: a cut multi-byte character or a binary answer still shows as text.
        const answer = () => ({
          statusCode: status,
          // Most receivers answer with no body: no buffer to build then.
          body: kept.length === 0 ? '' : Buffer.concat(kept).subarray(0, RESPONSE_BODY_KEPT).toString('utf8'),
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

function describe(err: unknown): string {
  if (err instanceof BudgetSpent) return 'timeout';
  if (err instanceof Error) {
    const cause = (err as Error & { cause?: unknown }).cause;
    const detail = cause instanceof Error ? `: ${cause.message}` : '';
    return `${err.message}${detail}`.slice(0, 500);
  }
  return String(err).slice(0, 500);
}
