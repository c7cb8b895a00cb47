import { NEST_APPS, type NestAppName } from '../apps';

/**
 * An RPC operation: the queue of the app that answers it, its pattern, the apps that may ask it,
 * and a payload validator in each direction.
 */
export interface RpcContract<Req, Res> {
  readonly pattern: string;
  /** The app whose RPC queue receives the request. */
  readonly queue: string;
  /**
   * The apps that may ask. The answering app's RPC server refuses a request from any other app,
   * known by the broker user RabbitMQ vouches for (the request's `user_id`, see `appOfBrokerUser`),
   * never by a field of the message.
   */
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

export class ContractViolation extends Error {
  constructor(contract: string, reason: string) {
    super(`${contract}: ${reason}`);
    this.name = 'ContractViolation';
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Every app logs in to RabbitMQ as `svc-<app>` (scripts/lib/credentials.cjs for `npm start` and
 * `npm test`, compose/rabbitmq-definitions.json, k8s/base/backing/rabbitmq-users.yaml). RabbitMQ
 * refuses a publish whose `user_id` property is not the connection's own user, so the `user_id`
 * of a request names the app that sent it.
 */
export const brokerUserOfApp = (app: NestAppName): string => `svc-${app}`;

/** The app a broker user belongs to, or undefined for any other user (an operator, a guest). */
export function appOfBrokerUser(user: unknown): NestAppName | undefined {
  if (typeof user !== 'string') return undefined;
  return NEST_APPS.find((app) => brokerUserOfApp(app) === user);
}
