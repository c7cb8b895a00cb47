import type { INestApplicationContext, ModuleMetadata } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';

/** A mistake on the command line: printed with the usage, exit code 64 (EX_USAGE). */
export class UsageError extends Error {}

const EX_USAGE = 64;

/** One line of a command's answer on stdout (logs go to stderr). */
export const printLine = (line = ''): void => void process.stdout.write(`${line}\n`);

// node:util parseArgs throws these for an unknown option, a missing value, an unexpected argument.
const isUsageError = (err: unknown) =>
  err instanceof UsageError ||
  (err instanceof TypeError && String((err as { code?: unknown }).code).startsWith('ERR_PARSE_ARGS'));

/**
 * An operator command with subcommands: no subcommand or `help` prints the usage (a usage error
 * exits 64); `exitCodeOf` maps expected failures to a line on stderr and an exit code.
 */
export async function runSubcommands(
  name: string,
  usage: string,
  args: readonly string[],
  run: (subcommand: string, rest: readonly string[]) => Promise<void>,
  exitCodeOf: (err: unknown) => number | undefined,
): Promise<void> {
  const [subcommand, ...rest] = args;
  if (!subcommand || subcommand === 'help' || subcommand === '--help') return printLine(usage);
  try {
    await run(subcommand, rest);
  } catch (err) {
    const code = isUsageError(err) ? EX_USAGE : exitCodeOf(err);
    if (code === undefined) throw err;
    process.stderr.write(`${name} ${subcommand}: ${err instanceof Error ? err.message : String(err)}\n`);
    if (code === EX_USAGE) process.stderr.write(`\n${usage}\n`);
    process.exitCode = code;
  }
}

/** An app's services without HTTP or RPC for a CLI command, closed when `work` ends; Nest logs nothing. */
export async function withAppContext<T>(
  imports: NonNullable<ModuleMetadata['imports']>,
  work: (context: INestApplicationContext) => Promise<T>,
): Promise<T> {
  const context = await NestFactory.createApplicationContext(
    { module: class CliModule {}, imports },
    { logger: false, abortOnError: false },
  );
  try {
    return await work(context);
  } finally {
    await context.close();
  }
}
