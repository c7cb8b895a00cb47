import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Optional } from '@nestjs/common';
import type { RpcContract } from '@svc/contracts';
import type { Histogram } from 'prom-client';
import { DependencyUnavailableError } from '../http/problem';
import { AppMetrics } from '../metrics/app-metrics';
import { APP_CONFIG } from '../platform.module';
import { AmqpConnection, DIRECT_REPLY_TO } from '../messaging/amqp-connection';
import { failSpan, markSpanError, SpanKind, spanHeaders, startSpan } from '../tracing/tracing';

/** The other app answered, with an error of its own (not a transport failure). */
export class RpcRemoteError extends Error {
  constructor(
    readonly pattern: string,
    readonly remote: unknown,
  ) {
    super(
      `${pattern} failed: ${typeof remote === 'object' && remote !== null ? JSON.stringify(remote) : String(remote)}`,
    );
    this.name = 'RpcRemoteError';
  }
}

/** How a call ended: answered, answered with an error, unanswered in time, or never sent. */
export type RpcOutcome = 'ok' | 'error' | 'timeout' | 'unavailable';
const RPC_OUTCOMES: readonly RpcOutcome[] = ['ok', 'error', 'timeout', 'unavailable'];

/** The answer did not come within the call's timeout (or the timeout left no time to send it). */
class RpcTimeoutError extends Error {}

/**
 * A call given less than this (what a caller's own budget left) is not sent: no answer could come
 * back in time, and the caller learns so at once rather than at the end of its budget.
 */
export const SHORTEST_RPC_TIMEOUT_MS = 50;

/**
 * Asks another app a question over RabbitMQ and returns a Promise (domain code never sees
 * RxJS or amqplib). A request that is not answered within the timeout also expires in the queue,
 * so a recovering app does not work through questions nobody waits for any more; the caller gets
 * DependencyUnavailableError (503). Every request carries the connection's broker user as
 * `user_id`, for the answering app's caller check (RpcServer).
 */
@Injectable()
export class RpcClient {
  /** Calls awaiting their reply, by correlation id: the reply, or the reason none will come. */
  private readonly pending = new Map<unknown, (reply: Buffer | Error) => void>();
  private listening?: Promise<void>;
  /** When the last reply of any call arrived (a channel that loses every request gets none). */
  private lastReplyAt = 0;
  private connectedOnce = false;
  /** `rpc_client_duration_seconds{pattern, outcome}`; a pattern's four series start at its first call. */
  private readonly duration?: Histogram<'pattern' | 'outcome'>;
  private readonly patternsSeen = new Set<string>();

  constructor(
    private readonly amqp: AmqpConnection,
    @Inject(APP_CONFIG) private readonly config: { readonly RPC_TIMEOUT_MS: number },
    @Optional() metrics?: AppMetrics,
  ) {
    this.duration = metrics?.histogram(
      'rpc_client_duration_seconds',
      'RPC calls to another app by contract pattern and outcome (ok, error answered, timeout, broker unavailable)',
      ['pattern', 'outcome'],
    );
  }

  async call<Req, Res>(
    contract: RpcContract<Req, Res>,
    payload: Req,
    timeoutMs = this.config.RPC_TIMEOUT_MS,
  ): Promise<Res> {
    const started = process.hrtime.bigint();
    let outcome: RpcOutcome = 'error';
    try {
      const response = await this.ask(contract, payload, timeoutMs);
      outcome = 'ok';
      return response;
    } catch (err) {
      outcome =
        err instanceof DependencyUnavailableError
          ? err.cause instanceof RpcTimeoutError
            ? 'timeout'
            : 'unavailable'
          : 'error';
      throw err;
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      if (this.duration && !this.patternsSeen.has(contract.pattern)) {
        this.patternsSeen.add(contract.pattern);
        AppMetrics.preset(this.duration, { pattern: [contract.pattern], outcome: RPC_OUTCOMES });
      }
      this.duration?.observe({ pattern: contract.pattern, outcome }, seconds);
    }
  }

  /**
   * The channel the pending requests went out on has closed, so no reply to them can come: their
   * callers get 503 now instead of at their timeout. (A caller that holds a lock while it waits,
   * as a seat provision holds its partner's, would otherwise hold it for the whole timeout, and
   * every request queued on that lock would answer late.)
   */
  private failPending(): void {
    const lost = new Error('RabbitMQ closed the channel before the answer came');
    for (const settle of [...this.pending.values()]) settle(lost);
  }

  private async ask<Req, Res>(contract: RpcContract<Req, Res>, payload: Req, wait: number): Promise<Res> {
    // Whole milliseconds: the message's expiration must be an integer, or the broker closes the channel.
    const timeoutMs = Math.floor(wait);
    if (timeoutMs < SHORTEST_RPC_TIMEOUT_MS) {
      throw new DependencyUnavailableError(
        contract.queue,
        new RpcTimeoutError(`${Math.max(0, timeoutMs)} ms left to ask`),
      );
    }
    const deadline = Date.now() + timeoutMs;
    const id = randomUUID();
    // The answering app's span is a child of this one: the question travels with its trace.
    const span = startSpan(contract.pattern, {
      kind: SpanKind.CLIENT,
      attributes: {
        'rpc.system': 'rabbitmq',
        'rpc.method': contract.pattern,
        'messaging.destination.name': contract.queue,
      },
    });
    const headers = spanHeaders(span);
    let reply: { err?: unknown; response?: unknown };
    try {
      // Until the first connect a call waits for it (an app answers as soon as it starts); once the
      // broker has been lost, a call fails at once with 503 instead of holding its caller while
      // the connection comes back.
      if (this.amqp.isConnected()) this.connectedOnce = true;
      else if (this.connectedOnce) throw new Error('RabbitMQ is not connected');
      else await this.amqp.waitUntilConnected(timeoutMs);
      // On first use only: an app that never asks has no right to read replies (auth-server). A
      // refused consume is retried by the connection; until then calls time out. A reply nobody
      // waits for any more finds no one in `pending`.
      this.listening ??= this.amqp
        .onReplies(
          (m) => {
            this.lastReplyAt = Date.now();
            this.pending.get(m.properties.correlationId)?.(m.content);
          },
          () => this.failPending(),
        )
        .catch(() => undefined);
      await this.listening;
      const content = await new Promise<Buffer>((resolve, reject) => {
        // Nest's RMQ envelope, so that callers and answerers of either kind understand each other.
        const request = Buffer.from(JSON.stringify({ pattern: contract.pattern, data: payload, id }));
        this.amqp.send(contract.queue, request, {
          correlationId: id,
          replyTo: DIRECT_REPLY_TO,
          expiration: String(timeoutMs),
          userId: this.amqp.user,
          ...(headers && { headers }),
        });
        const sentAt = Date.now();
        const timer = setTimeout(() => {
          this.pending.delete(id);
          // Not one reply to anyone since this went out: the channel, not the answering app, is
          // the likelier fault (AmqpConnection.renewDirect). A slow app still answers someone.
          if (this.lastReplyAt < sentAt) this.amqp.renewDirect();
          reject(new RpcTimeoutError(`no answer within ${timeoutMs} ms`));
        }, deadline - Date.now());
        this.pending.set(id, (answer) => {
          clearTimeout(timer);
          this.pending.delete(id);
          if (answer instanceof Error) reject(answer);
          else resolve(answer);
        });
      });
      reply = JSON.parse(content.toString('utf8')) as typeof reply;
    } catch (err) {
      failSpan(span, err);
      span?.end();
      throw new DependencyUnavailableError(contract.queue, err);
    }
    if (reply.err) markSpanError(span, 'the answering app replied with an error');
    span?.end();
    if (reply.err) throw new RpcRemoteError(contract.pattern, reply.err);
    return contract.parseResponse(reply.response);
  }
}
