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
  run<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }
}

/**
 * The rows of a raw `query()`: TypeORM's PostgreSQL driver answers an UPDATE or DELETE with
 * `[rows, affected]`, and an INSERT or SELECT with the rows alone.
 */
export function returnedRows<T>(result: unknown): T[] {
  const list = result as unknown[];
  return (Array.isArray(list[0]) ? list[0] : list) as T[];
}
