import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';

/**
 * A unit of work. Services pass it to repositories without looking inside, so the rules stay
 * in services and only repositories talk to TypeORM.
 */
export type Transaction = EntityManager;

@Injectable()
export class TransactionRunner {
  constructor(private readonly dataSource: DataSource) {}

  /** Runs `work` in one READ COMMITTED transaction; a throw rolls everything back. */
  async run<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
    const effects: (() => void)[] = [];
    const result = await this.dataSource.transaction((tx) => {
      AFTER_COMMIT.set(tx, effects);
      return work(tx);
    });
    for (const effect of effects) effect();
    return result;
  }
}

const AFTER_COMMIT = new WeakMap<Transaction, (() => void)[]>();

/**
 * Runs `effect` once `tx` has committed, never when it rolls back (a metric of what the
 * transaction wrote, say); at once for work outside a TransactionRunner transaction.
 */
export function afterCommit(tx: Transaction, effect: () => void): void {
  const effects = AFTER_COMMIT.get(tx);
  if (effects) effects.push(effect);
  else effect();
}
