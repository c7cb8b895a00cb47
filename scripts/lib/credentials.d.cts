// Types of credentials.cjs for the TypeScript test harness.
export interface BrokerPermissions {
  readonly configure: string;
  readonly write: string;
  readonly read: string;
}
export declare const APPS: Readonly<
  Record<string, { readonly schema: string; readonly amqp: BrokerPermissions }>
>;
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
