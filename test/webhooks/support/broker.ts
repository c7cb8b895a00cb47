/** RabbitMQ's management API for this run's vhost (what AMQP itself cannot list, e.g. bindings). */
function management(amqpUrl: string) {
  const u = new URL(amqpUrl);
  const vhost = decodeURIComponent(u.pathname.replace(/^\//, '')) || '/';
  const port = Number(process.env.RABBITMQ_MANAGEMENT_PORT ?? 15672);
  const auth = Buffer.from(
    `${decodeURIComponent(u.username || 'guest')}:${decodeURIComponent(u.password || 'guest')}`,
  ).toString('base64');
  return {
    vhost,
    get: async <T>(path: string): Promise<T> => {
      const res = await fetch(`http://${u.hostname}:${port}/api${path}`, {
        headers: { authorization: `Basic ${auth}` },
        signal: AbortSignal.timeout(10_000),
      });
      if (!res.ok) throw new Error(`GET /api${path}: HTTP ${res.status}`);
      return (await res.json()) as T;
    },
  };
}

export interface Binding {
  readonly source: string;
  readonly routing_key: string;
}

export async function queueBindings(amqpUrl: string, queue: string): Promise<Binding[]> {
  const m = management(amqpUrl);
  return m.get<Binding[]>(`/queues/${encodeURIComponent(m.vhost)}/${encodeURIComponent(queue)}/bindings`);
}
