import type { Sql } from '@svc/platform';

/** A statement as a fake sent it: its name and the keys (the first column) it carried. */
export interface SentStatement {
  readonly name: string;
  readonly keys: string[];
}

/**
 * A fake `Sql` for the group commits' unit tests: every prepared statement stays in flight until
 * the test lets it go, so a test decides what arrives while a batch is out. A `…batch` statement
 * carries an array per column, another statement one value; each key answers `answer(key)`. The
 * n-th batch may fail (`batchFails(n)`: an error, or `short` for too few rows), and a statement
 * carrying a key that starts with `fails` fails as a whole. Other fakes may record into
 * `statements` too (a tombstone write, say), so the test sees one order of everything sent.
 */
export function heldStatements(
  answer: (key: string) => Record<string, unknown>,
  batchFails: (n: number) => Error | 'short' | undefined = () => undefined,
) {
  const statements: SentStatement[] = [];
  const release: (() => void)[] = [];
  let batches = 0;
  const sql = {
    prepared: async (name: string, _text: string, values: unknown[]) => {
      const keys = name.endsWith('batch') ? (values[0] as string[]) : [values[0] as string];
      statements.push({ name, keys });
      await new Promise<void>((resolve) => release.push(resolve));
      if (name.endsWith('batch')) {
        const failure = batchFails(++batches);
        if (failure === 'short') return [];
        if (failure) throw failure;
      }
      if (keys.some((k) => k.startsWith('fails'))) throw new Error(`statement failed for ${keys.join()}`);
      return keys.map(answer);
    },
  } as unknown as Sql;
  /** Answers every statement in flight, then lets their callers go on. */
  const letGo = async () => {
    while (release.length > 0) release.shift()!();
    await new Promise((r) => setImmediate(r));
  };
  return { sql, statements, letGo };
}

/** Lets statements go until every call settled (ten rounds at most), in the calls' order. */
export async function settleAll(letGo: () => Promise<void>, calls: Promise<unknown>[]) {
  const all = Promise.allSettled(calls);
  for (let i = 0; i < 10; i++) await letGo();
  return all;
}
