// Types of credentials.cjs for the TypeScript test harness.
export interface BrokerPermissions {
  readonly configure: string;
  readonly write: string;
  readonly read: string;
}
/** The routing keys an app may publish with and bind with on one topic exchange. */
export interface TopicKeys {
  readonly exchange: string;
  readonly publishes: readonly string[];
  readonly binds: readonly string[];
}
/** A topic permission as RabbitMQ takes it: regexes on routing keys (write) and binding keys (read). */
export interface TopicPermission {
  readonly exchange: string;
  readonly write: string;
  readonly read: string;
}
export declare const APPS: Readonly<
  Record<
    string,
    { readonly schema: string; readonly amqp: BrokerPermissions; readonly topics?: readonly TopicKeys[] }
  >
>;
export declare function topicPermissions(app: string): TopicPermission[];
export declare function publisherOf(exchange: string, routingKey: string): string;
export declare function pgRole(app: string): string;
export declare function amqpUser(app: string): string;
export declare function amqpPassword(app: string): string;
export declare function appBrokerUrl(app: string, amqpUrl: string): string;
interface OwnerUrls {
  readonly DATABASE_URL?: string;
  readonly AMQP_URL?: string;
}
export declare function appConnections(
  app: string,
  owner: OwnerUrls,
): { DATABASE_URL?: string; AMQP_URL?: string };
export declare function cliConnections(
  app: string,
  owner: OwnerUrls,
): { DATABASE_URL?: string; DATABASE_APP_ROLE?: string; AMQP_URL?: string };
