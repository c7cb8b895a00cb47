// Types of what the TypeScript test harness uses of isolation.cjs.
export declare function createSuiteVhost(
  amqpUrl: string,
  label: string,
  log?: (line: string) => void,
): Promise<{ url: string; remove(): Promise<void> }>;
