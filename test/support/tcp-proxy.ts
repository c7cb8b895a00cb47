import net from 'node:net';

/**
 * A TCP relay in front of a real server, so a test can cut one client's network path (and
 * restore it) without stopping the shared server other tests use.
 */
export class TcpProxy {
  private server?: net.Server;
  private readonly sockets = new Set<net.Socket>();
  port = 0;
  /** How long a new client waits before the proxy connects it upstream (a slow network path). */
  connectDelayMs = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  async start(port = 0): Promise<number> {
    this.server = net.createServer((client) => {
      this.sockets.add(client);
      client.on('close', () => this.sockets.delete(client));
      client.on('error', () => client.destroy());
      const relay = () => {
        if (client.destroyed) return;
        const upstream = net.connect(this.targetPort, this.targetHost);
        this.sockets.add(upstream);
        upstream.on('close', () => this.sockets.delete(upstream));
        upstream.on('error', () => upstream.destroy());
        client.pipe(upstream).pipe(client);
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
      };
      if (this.connectDelayMs > 0) setTimeout(relay, this.connectDelayMs);
      else relay();
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.port = (this.server!.address() as net.AddressInfo).port;
    return this.port;
  }

  /** Client and upstream sockets currently open through the proxy (two per relayed connection). */
  get openSockets(): number {
    return this.sockets.size;
  }

  /** Drops every open connection and refuses new ones. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }

  /** Listens again on the same port. */
  async restore(): Promise<void> {
    await this.start(this.port);
  }

  async stop(): Promise<void> {
    await this.cut();
  }
}
