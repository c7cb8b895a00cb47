// Types of procs.cjs for the TypeScript test harness.
import type { ChildProcess } from 'node:child_process';

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
  error?: Error;
}
export interface ProcessHandle {
  name: string;
  child: ChildProcess;
  pid: number | undefined;
  exited: Promise<ExitInfo>;
  stopping: boolean;
  alive(): boolean;
  exitInfo(): ExitInfo | undefined;
  stop(graceMs?: number): Promise<ExitInfo>;
}
export interface Prefix {
  name?: string;
  width: number;
  colour: number;
}
export declare function startProcess(options: {
  name: string;
  cmd: string;
  args?: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  prefix?: Prefix;
  logFile?: string;
  onExit?: (code: number | null, signal: NodeJS.Signals | null, handle: ProcessHandle) => void;
}): ProcessHandle;
export declare function run(
  cmd: string,
  args: string[],
  options?: {
    env?: NodeJS.ProcessEnv;
    cwd?: string;
    prefix?: Prefix;
    logFile?: string;
    timeoutMs?: number;
    onStart?: (handle: ProcessHandle) => void;
  },
): Promise<{ code: number | null; signal: NodeJS.Signals | null; timedOut: boolean; error?: Error }>;
export declare function which(cmd: string): string;
export declare function tail(file: string, lines?: number): string;
export declare function signalGroup(pid: number, signal: NodeJS.Signals): void;
/** Every process below `pid` (Linux /proc), those in process groups of their own included. */
export declare function descendants(pid: number): number[];
/** A supervisor's wait before restarting a process after `crashesInARow` crashes: 1 s, doubling, at most 30 s. */
export declare function restartDelayMs(
  crashesInARow: number,
  options?: { firstMs?: number; maxMs?: number },
): number;
export declare const COLOURS: number[];
