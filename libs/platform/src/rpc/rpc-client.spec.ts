import { CREW_MEMBERS_BY_EMAIL } from '@svc/contracts';
import { DependencyUnavailableError } from '../http/problem';
import type { AmqpConnection } from '../messaging/amqp-connection';
import { AppMetrics } from '../metrics/app-metrics';
import { RpcClient, SHORTEST_RPC_TIMEOUT_MS } from './rpc-client';

describe('RpcClient, a call with too little time left', () => {
  it('sends nothing and fails at once as a timeout', async () => {
    const touched: string[] = [];
    // Any use of the broker would show here.
    const amqp = new Proxy({} as AmqpConnection, {
      get: (_target, name) => {
        touched.push(String(name));
        return () => undefined;
      },
    });
    const metrics = new AppMetrics('rpc-test');
    const rpc = new RpcClient(amqp, { RPC_TIMEOUT_MS: 2000 }, metrics);
    const call = rpc.call(CREW_MEMBERS_BY_EMAIL, { emails: ['a@example.test'] }, SHORTEST_RPC_TIMEOUT_MS - 1);
    await expect(call).rejects.toBeInstanceOf(DependencyUnavailableError);
    expect(touched).toEqual([]);
    const line = (await metrics.render())
      .split('\n')
      .find((l) => l.startsWith('rpc_client_duration_seconds_count') && l.includes('outcome="timeout"'));
    expect(line).toMatch(/ 1$/);
  });
});

describe('RpcClient, calls nobody answers', () => {
  /** A connection that records sends and renewals, and lets the test play the answering app. */
  function fakeConnection() {
    const sent: { correlationId: string }[] = [];
    let reply: ((m: { properties: { correlationId: string }; content: Buffer }) => void) | undefined;
    const amqp = {
      user: 'test',
      renewals: 0,
      isConnected: () => true,
      onReplies: async (handler: typeof reply) => {
        reply = handler;
      },
      send: (_queue: string, _content: Buffer, options: { correlationId: string }) => sent.push(options),
      renewDirect() {
        this.renewals += 1;
      },
    };
    const answer = (i: number) =>
      reply!({
        properties: { correlationId: sent[i].correlationId },
        content: Buffer.from(JSON.stringify({ response: { members: [] } })),
      });
    return { amqp, answer };
  }

  it('sends on a new channel when not one reply came back for a whole timeout', async () => {
    const { amqp } = fakeConnection();
    const rpc = new RpcClient(amqp as unknown as AmqpConnection, { RPC_TIMEOUT_MS: 200 });
    await expect(rpc.call(CREW_MEMBERS_BY_EMAIL, { emails: ['a@example.test'] })).rejects.toBeInstanceOf(
      DependencyUnavailableError,
    );
    expect(amqp.renewals).toBe(1);
  });

  it('keeps the channel when the answering app is slow but answers others meanwhile', async () => {
    const { amqp, answer } = fakeConnection();
    const rpc = new RpcClient(amqp as unknown as AmqpConnection, { RPC_TIMEOUT_MS: 300 });
    const slow = rpc.call(CREW_MEMBERS_BY_EMAIL, { emails: ['a@example.test'] });
    const quick = rpc.call(CREW_MEMBERS_BY_EMAIL, { emails: ['b@example.test'] });
    await new Promise((r) => setTimeout(r, 50));
    answer(1);
    await expect(quick).resolves.toEqual({ members: [] });
    await expect(slow).rejects.toBeInstanceOf(DependencyUnavailableError);
    expect(amqp.renewals).toBe(0);
  });
});

describe('RpcClient, what is left of a budget in fractions of a millisecond', () => {
  it('sends an expiration in whole milliseconds (the broker closes the channel on any other)', async () => {
    const sent: { expiration?: string; correlationId: string }[] = [];
    let reply: ((m: { properties: { correlationId: string }; content: Buffer }) => void) | undefined;
    const amqp = {
      user: 'test',
      isConnected: () => true,
      onReplies: async (handler: typeof reply) => {
        reply = handler;
      },
      send: (_queue: string, _content: Buffer, options: (typeof sent)[number]) => {
        sent.push(options);
        queueMicrotask(() =>
          reply!({
            properties: { correlationId: options.correlationId },
            content: Buffer.from(JSON.stringify({ response: { members: [] } })),
          }),
        );
      },
      renewDirect: () => undefined,
    };
    const rpc = new RpcClient(amqp as unknown as AmqpConnection, { RPC_TIMEOUT_MS: 2000 });
    await expect(rpc.call(CREW_MEMBERS_BY_EMAIL, { emails: ['a@example.test'] }, 1234.56)).resolves.toEqual({
      members: [],
    });
    expect(sent.map((s) => s.expiration)).toEqual(['1234']);
  });
});
