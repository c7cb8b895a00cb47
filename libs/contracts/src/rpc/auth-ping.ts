import { ContractViolation, isRecord, RPC_QUEUES, type RpcContract } from './rpc';

/**
 * `auth.ping`: the smallest question one app can ask auth-server. Apps use it to prove the RPC
 * path (queue, reply, timeout) works before they depend on auth-server for real answers.
 */
export interface AuthPingResponse {
  readonly app: 'auth-server';
  readonly from: string;
  readonly at: string;
}

export const AUTH_PING: RpcContract<{ readonly from: string }, AuthPingResponse> = {
  pattern: 'auth.ping',
  queue: RPC_QUEUES.authServer,
  parseRequest(input) {
    if (!isRecord(input) || typeof input.from !== 'string' || input.from.length === 0) {
      throw new ContractViolation('auth.ping request', '`from` must be a non-empty string');
    }
    return { from: input.from };
  },
  parseResponse(input) {
    if (
      !isRecord(input) ||
      input.app !== 'auth-server' ||
      typeof input.from !== 'string' ||
      typeof input.at !== 'string'
    ) {
      throw new ContractViolation('auth.ping response', 'expected {app, from, at}');
    }
    return { app: 'auth-server', from: input.from, at: input.at };
  },
};
