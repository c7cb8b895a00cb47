import type { DataSource } from 'typeorm';
import { afterCommit, TransactionRunner, type Transaction } from './transaction-runner';

/** A DataSource whose transaction commits when `work` resolves and rolls back when it throws. */
function runnerLog() {
  const log: string[] = [];
  const dataSource = {
    async transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
      const result = await work({} as Transaction).catch((err: unknown) => {
        log.push('rollback');
        throw err;
      });
      log.push('commit');
      return result;
    },
  } as unknown as DataSource;
  return { log, runner: new TransactionRunner(dataSource) };
}

describe('afterCommit', () => {
  it('runs the effect once the transaction has committed, not before', async () => {
    const { log, runner } = runnerLog();
    const result = await runner.run(async (tx) => {
      afterCommit(tx, () => log.push('effect'));
      log.push('work done');
      return 42;
    });
    expect(result).toBe(42);
    expect(log).toEqual(['work done', 'commit', 'effect']);
  });

  it('never runs it when the transaction rolls back', async () => {
    const { log, runner } = runnerLog();
    await expect(
      runner.run(async (tx) => {
        afterCommit(tx, () => log.push('effect'));
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    expect(log).toEqual(['rollback']);
  });

  it('runs it at once outside a TransactionRunner transaction', () => {
    const log: string[] = [];
    afterCommit({} as Transaction, () => log.push('effect'));
    expect(log).toEqual(['effect']);
  });
});
