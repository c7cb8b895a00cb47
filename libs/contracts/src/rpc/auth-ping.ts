import { oneOf, readFields, readString, type Read } from '../validate';
import { ContractViolation, queueOf, type RpcContract } from './rpc';

/** `auth.ping`: the smallest question, proving the RPC path to auth-server works. */
const NAME = 'auth.ping';

const RESPONSE = { app: oneOf(['auth-server']), from: readString, at: readString };
export type AuthPingResponse = Read<typeof RESPONSE>;

export const AUTH_PING: RpcContract<{ readonly from: string }, AuthPingResponse> = {
  pattern: NAME,
  queue: queueOf(NAME),
  /** Every app that asks auth-server anything (auth-server answers itself without RPC). */
  callers: ['consent-ui', 'crew-api', 'sponsorship-api', 'webhook-dispatcher'],
  parseRequest(input) {
    const request = readFields(NAME, input, { from: readString });
    if (request.from === '') throw new ContractViolation(NAME, '`from` must not be empty');
    return request;
  },
  parseResponse: (input) => readFields(NAME, input, RESPONSE),
};
