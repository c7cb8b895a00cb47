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
