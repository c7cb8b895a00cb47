import http from 'node:http';
import type { AddressInfo } from 'node:net';
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
