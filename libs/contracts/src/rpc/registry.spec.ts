import * as contracts from '../index';
import { NEST_APPS } from '../apps';
import { appOfBrokerUser, brokerUserOfApp, RPC_QUEUES, type RpcCallers } from './rpc';
import { RPC_CONTRACTS } from './registry';

/** Every value the contracts lib exports that has the shape of an RPC contract. */
const exported = Object.entries(contracts).filter(
  ([, value]) =>
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { pattern?: unknown }).pattern === 'string' &&
    typeof (value as { parseRequest?: unknown }).parseRequest === 'function',
) as [string, RpcCallers][];

describe('RPC contracts', () => {
  it('lists every exported contract in RPC_CONTRACTS, once per pattern', () => {
    expect(exported.length).toBeGreaterThan(20);
    const listed = new Set<RpcCallers>(RPC_CONTRACTS);
    expect(exported.filter(([, c]) => !listed.has(c)).map(([name]) => name)).toEqual([]);
    const patterns = RPC_CONTRACTS.map((c) => c.pattern);
    expect(new Set(patterns).size).toBe(patterns.length);
  });

  it.each(RPC_CONTRACTS.map((c) => [c.pattern, c] as const))(
    '%s names the apps that may call it, none of them the app that answers it',
    (_pattern, contract) => {
      expect(contract.callers.length).toBeGreaterThan(0);
      for (const app of contract.callers) expect(NEST_APPS).toContain(app);
      expect(Object.values(RPC_QUEUES)).toContain(contract.queue);
      const answering = Object.entries(RPC_QUEUES).find(([, q]) => q === contract.queue)?.[0];
      const camel = (app: string) => app.replace(/-(\w)/g, (_, c: string) => c.toUpperCase());
      expect(contract.callers.map(camel)).not.toContain(answering);
    },
  );
});

describe('appOfBrokerUser', () => {
  it('knows each app by its broker user svc-<app>, and nobody else', () => {
    for (const app of NEST_APPS) expect(appOfBrokerUser(brokerUserOfApp(app))).toBe(app);
    for (const other of ['guest', 'svc-', 'svc-gateway', 'crew-api', 'SVC-crew-api', '', undefined, 7]) {
      expect(appOfBrokerUser(other)).toBeUndefined();
    }
  });
});
