// Types of net.cjs for the TypeScript test harness.
export interface HttpResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}
export declare function sleep(ms: number): Promise<void>;
export declare function tcpReachable(host: string, port: number, timeoutMs?: number): Promise<boolean>;
export declare function waitForPort(
  host: string,
  port: number,
  timeoutMs: number,
  what?: string,
): Promise<void>;
export declare function freePort(): Promise<number>;
export declare function freePorts(count: number): Promise<number[]>;
export declare function httpRequest(
  url: string,
  options?: { method?: string; headers?: Record<string, string>; body?: string | Buffer; timeoutMs?: number },
): Promise<HttpResult>;
export declare function waitForHttpOk(
  url: string,
  options?: { timeoutMs?: number; isAlive?: () => boolean; what?: string },
): Promise<HttpResult>;
export declare function redisCommands(
  redisUrl: string,
  commands: (string | number)[][],
  timeoutMs?: number,
): Promise<unknown[]>;
