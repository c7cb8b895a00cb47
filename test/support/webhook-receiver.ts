import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PartnerPrincipal } from '@svc/security';
import type { Pool } from 'pg';
import { webhookViolations } from './contract';

/** One request as the receiver saw it: the raw bytes and the headers (lower-case names). */
export interface ReceivedWebhook {
  readonly path: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly rawBody: Buffer;
  readonly receivedAt: number;
}

/**
 * What a path answers to its n-th request (1-based): a status, a status after a pause (a slow
 * endpoint), or 'hang' (never answers).
 */
export type Behaviour = (n: number) => number | { status: number; afterMs: number } | 'hang';

/**
 * A partner's webhook endpoint on a free loopback port. Each test registers its own path with its
 * own behaviour, so tests share nothing but the server.
 */
export class WebhookReceiver {
  private readonly received: ReceivedWebhook[] = [];
  private readonly behaviours = new Map<string, Behaviour>();
  /** Deliveries that depart from the description's `webhooks` section, by path. */
  private readonly violations = new Map<string, string[]>();

  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<WebhookReceiver> {
    const server = http.createServer();
    const receiver = new WebhookReceiver(server);
    server.on('request', (req, res) => receiver.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  /** A new endpoint URL answering with `behaviour`. */
  endpoint(path: string, behaviour: Behaviour = () => 204): string {
    this.behaviours.set(path, behaviour);
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}${path}`;
  }

  /** What `path` received; throws when a delivery departs from the OpenAPI description. */
  requests(path: string): ReceivedWebhook[] {
    const violations = this.violations.get(path);
    if (violations?.length) {
      throw new Error(
        `A delivery to ${path} departs from the OpenAPI description's webhooks:\n  - ${violations.join('\n  - ')}`,
      );
    }
    return this.received.filter((r) => r.path === path);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      const rawBody = Buffer.concat(chunks);
      this.received.push({ path, headers: req.headers, rawBody, receivedAt: Date.now() });
      const departs = webhookViolations(req.headers, rawBody);
      if (departs.length) this.violations.set(path, [...(this.violations.get(path) ?? []), ...departs]);
      const behaviour = this.behaviours.get(path) ?? (() => 404);
      const answer = behaviour(this.received.filter((r) => r.path === path).length);
      if (answer === 'hang') return;
      const [status, afterMs] = typeof answer === 'number' ? [answer, 0] : [answer.status, answer.afterMs];
      setTimeout(() => {
        if (res.destroyed) return;
        res
          .writeHead(status, { 'content-type': 'text/plain' })
          .end('x'.repeat(status >= 300 ? 64 * 1024 : 0));
      }, afterMs);
    });
  }
}

/**
 * A partner's endpoint of one test, on a port of its own: `answer` handles each request (by default
 * it never answers, as an endpoint that hangs until the attempt budget runs out). Counts the
 * requests, those it holds open at once, and each delivery id it saw.
 */
export class TestEndpoint {
  requests = 0;
  open = 0;
  maxOpen = 0;
  readonly seen = new Map<string, number>();
  private readonly server: http.Server;

  constructor(answer: (req: http.IncomingMessage, res: http.ServerResponse) => void = (req) => req.resume()) {
    this.server = http.createServer((req, res) => {
      const id = String(req.headers['x-svc-delivery-id']);
      this.seen.set(id, (this.seen.get(id) ?? 0) + 1);
      this.requests += 1;
      this.open += 1;
      this.maxOpen = Math.max(this.maxOpen, this.open);
      req.socket.once('close', () => (this.open -= 1));
      answer(req, res);
    });
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/** The principal the partner API's guard hands the partner-webhooks service. */
export const asPartner = (clientId: string) =>
  ({ client_id: clientId, suspended: false, sponsorship: false }) as unknown as PartnerPrincipal;

/**
 * `count` finished deliveries of a partner, `minutesAgo` old, written as the dispatcher writes them
 * (a backlog to replay or redeliver); their delivery ids.
 */
export async function finishedDeliveries(
  db: Pool,
  of: { clientId: string; userId: string },
  count: number,
  options: { status?: 'delivered' | 'failed'; minutesAgo?: number; attempts?: number } = {},
): Promise<string[]> {
  const run = randomBytes(4).toString('hex');
  const { rows } = await db.query<{ delivery_id: string }>(
    `INSERT INTO webhooks.deliveries
       (delivery_id, event_id, event_type, user_id, client_id, target_url, body, status, attempts,
        give_up_reason, created_at)
     SELECT 'dlv_fd' || $1 || g, 'evt_fd' || $1 || g, 'user.profile.updated', $2, $3, 'http://127.0.0.1:9/x',
            '{"created_at":"2026-01-01T00:00:00.000Z","id":"evt_fd' || $1 || g ||
              '","type":"user.profile.updated","user_id":"' || $2 || '"}', $5, $7,
            CASE WHEN $5 = 'failed' THEN 'attempts_exhausted' END, now() - $6::int * interval '1 minute'
       FROM generate_series(1, $4::int) AS g
     RETURNING delivery_id`,
    [
      run,
      of.userId,
      of.clientId,
      count,
      options.status ?? 'failed',
      options.minutesAgo ?? 60,
      options.attempts ?? 1,
    ],
  );
  return rows.map((r) => r.delivery_id);
}
