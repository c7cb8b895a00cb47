import { AUTH_CONSENTS_CONNECTED, CONNECTED_MEMBERS_MAX } from '@svc/contracts';
import {
  AppMetrics,
  DependencyUnavailableError,
  SHORTEST_RPC_TIMEOUT_MS,
  type RpcClient,
} from '@svc/platform';
import pino from 'pino';
import { MemberConsentsClient } from './member-consents.client';

function client(answer: (userIds: readonly string[]) => Promise<readonly string[]>) {
  const calls: { client_id: string; user_ids: readonly string[] }[] = [];
  const timeouts: (number | undefined)[] = [];
  const rpc = {
    call: (
      contract: unknown,
      payload: { client_id: string; user_ids: readonly string[] },
      timeoutMs?: number,
    ) => {
      expect(contract).toBe(AUTH_CONSENTS_CONNECTED);
      // As RpcClient: too little time left, nothing is sent.
      if (timeoutMs !== undefined && timeoutMs < SHORTEST_RPC_TIMEOUT_MS) {
        return Promise.reject(new DependencyUnavailableError('rpc.auth-server'));
      }
      calls.push(payload);
      timeouts.push(timeoutMs);
      return answer(payload.user_ids).then((user_ids) => ({ user_ids }));
    },
  } as unknown as RpcClient;
  const metrics = new AppMetrics('sponsorship-api');
  return {
    consents: new MemberConsentsClient(rpc, pino({ level: 'silent' }), metrics),
    calls,
    timeouts,
    metrics,
  };
}

describe('MemberConsentsClient', () => {
  it('asks once per CONNECTED_MEMBERS_MAX distinct members and answers the connected ones', async () => {
    const { consents, calls } = client((ids) => Promise.resolve(ids.filter((id) => id.endsWith('7'))));
    const ids = Array.from({ length: CONNECTED_MEMBERS_MAX + 10 }, (_, i) => `usr_${i}`);
    const connected = await consents.connectedAmong('partner-a', [...ids, ...ids]);
    expect(calls.map((c) => c.user_ids.length)).toEqual([CONNECTED_MEMBERS_MAX, 10]);
    expect(calls.every((c) => c.client_id === 'partner-a')).toBe(true);
    expect([...connected].sort()).toEqual(ids.filter((id) => id.endsWith('7')).sort());
  });

  it('answers nobody connected, never failing, when auth-server cannot answer, and counts it', async () => {
    const { consents, metrics } = client(() =>
      Promise.reject(new DependencyUnavailableError('rpc.auth-server')),
    );
    await expect(consents.connectedAmong('partner-a', ['usr_1'])).resolves.toEqual(new Set());
    const line = (await metrics.render())
      .split('\n')
      .find((l) => l.startsWith('sponsorship_consent_lookup_failures_total'));
    expect(line).toMatch(/ 1$/);
  });

  it('asks within the budget it is given, and not at all with under 50 ms of it left (names withheld)', async () => {
    const { consents, calls, timeouts } = client((ids) => Promise.resolve(ids));
    await expect(consents.connectedAmong('partner-a', ['usr_1'], 700)).resolves.toEqual(new Set(['usr_1']));
    expect(timeouts).toEqual([700]);
    await expect(consents.connectedAmong('partner-a', ['usr_1'], 20)).resolves.toEqual(new Set());
    expect(calls).toHaveLength(1);
  });
});
