// Types of apps.cjs for the TypeScript test harness.
import type { ProcessHandle, Prefix } from './procs.cjs';

export type NestAppName =
  'auth-server' | 'consent-ui' | 'crew-api' | 'sponsorship-api' | 'webhook-dispatcher';
export declare const ROOT: string;
export declare const DIST: string;
export declare const NEST_APPS: NestAppName[];
export declare const DEFAULT_PORTS: Record<NestAppName | 'gateway', number>;
export declare const DEFAULT_METRICS_PORTS: Record<NestAppName, number>;
export declare const GATEWAY_UPSTREAM_VARS: Partial<Record<NestAppName, string>>;
export declare const GENERATOR_JS: string;
export declare const MAX_REPLICAS: number;
/** REPLICAS as `npm start` reads it: an integer from 1 to 8 (default 1); throws otherwise. */
export declare function parseReplicas(raw: string | undefined): number;
/** `npm start`'s port of an app's replica i (0-based): its default port + 100·i. */
export declare function replicaPort(app: NestAppName, replica: number): number;
export declare function replicaMetricsPort(app: NestAppName, replica: number): number;
export declare function mainJs(app: string): string;
/** The Node options of every app process, as k8s/base/kustomization.yaml sets them. */
export declare const APP_NODE_OPTIONS: string;
/** An app's Node options: its Deployment's own NODE_OPTIONS if it sets them, else APP_NODE_OPTIONS. */
export declare function nodeOptionsOf(app: string): string;
export declare function cliJs(app: string): string;
export declare function writtenApps(): NestAppName[];
export declare function assertBuilt(
  apps: readonly string[],
  options?: { generator?: boolean; cli?: boolean },
): void;
export declare function appEnv(options?: {
  /** The app the process runs, for its own Node options (nodeOptionsOf). */
  app?: string;
  services?: Record<string, string | undefined>;
  fixed?: Record<string, string | number | undefined>;
  gatewayPort?: number;
}): NodeJS.ProcessEnv;
export declare function runCli(
  app: string,
  command: string,
  env: NodeJS.ProcessEnv,
  options?: { prefix?: Prefix; logFile?: string; timeoutMs?: number; onStart?: (h: ProcessHandle) => void },
): Promise<void>;
export declare function generateGateway(
  outDir: string,
  options: {
    gatewayPort: number;
    ports: Partial<Record<string, number | string>>;
    env: NodeJS.ProcessEnv;
    prefix?: Prefix;
    logFile?: string;
    onStart?: (h: ProcessHandle) => void;
  },
): Promise<void>;
export declare function nginxArgs(outDir: string): string[];
