import { NEST_APPS, type NestAppName } from '../apps';

/** An RPC operation: its queue, pattern, callers and a payload validator each way. */
export interface RpcContract<Req, Res> {
  readonly pattern: string;
  /** The app whose RPC queue receives the request. */
  readonly queue: string;
  /** The apps that may ask, known by the broker user RabbitMQ vouches for (`appOfBrokerUser`). */
  readonly callers: readonly NestAppName[];
  /** Runs on every payload the answering app receives; throws on a malformed one. */
  readonly parseRequest: (input: unknown) => Req;
  readonly parseResponse: (input: unknown) => Res;
}

/** What an RPC server needs of a contract to know who may ask it. */
export type RpcCallers = Pick<RpcContract<unknown, unknown>, 'pattern' | 'queue' | 'callers'>;

export const RPC_QUEUES = {
  authServer: 'rpc.auth-server',
  crewApi: 'rpc.crew-api',
  sponsorshipApi: 'rpc.sponsorship-api',
  /** Named under the dispatcher's own `webhooks.` prefix, which its broker user already owns. */
  webhookDispatcher: 'webhooks.rpc',
} as const;

/** A pattern's first segment names the app that answers it, and so the queue it is asked on. */
const QUEUE_OF = {
  auth: RPC_QUEUES.authServer,
  crew: RPC_QUEUES.crewApi,
  sponsorship: RPC_QUEUES.sponsorshipApi,
  webhooks: RPC_QUEUES.webhookDispatcher,
} as const;
export type RpcPattern = `${keyof typeof QUEUE_OF}.${string}`;
export const queueOf = (pattern: RpcPattern): string =>
  QUEUE_OF[pattern.split('.')[0] as keyof typeof QUEUE_OF];

export class ContractViolation extends Error {
  constructor(contract: string, reason: string) {
    super(`${contract}: ${reason}`);
    this.name = 'ContractViolation';
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Every app's RabbitMQ user; RabbitMQ refuses a `user_id` other than the connection's, so it names the sender. */
export const brokerUserOfApp = (app: NestAppName): string => `svc-${app}`;

/** The app a broker user belongs to, or undefined for any other user (an operator, a guest). */
export function appOfBrokerUser(user: unknown): NestAppName | undefined {
  if (typeof user !== 'string') return undefined;
  return NEST_APPS.find((app) => brokerUserOfApp(app) === user);
}
