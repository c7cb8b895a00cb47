/** An RPC operation: the queue of the app that answers it, its pattern, and a payload validator. */
export interface RpcContract<Req, Res> {
  readonly pattern: string;
  /** The app whose RPC queue receives the request. */
  readonly queue: string;
  /** Runs on every payload the answering app receives; throws on a malformed one. */
  readonly parseRequest: (input: unknown) => Req;
  readonly parseResponse: (input: unknown) => Res;
}

export const RPC_QUEUES = {
  authServer: 'rpc.auth-server',
  crewApi: 'rpc.crew-api',
  sponsorshipApi: 'rpc.sponsorship-api',
  /** Named under the dispatcher's own `webhooks.` prefix, which its broker user already owns. */
  webhookDispatcher: 'webhooks.rpc',
} as const;

export class ContractViolation extends Error {
  constructor(contract: string, reason: string) {
    super(`${contract}: ${reason}`);
    this.name = 'ContractViolation';
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
