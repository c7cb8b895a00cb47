import { Inject, Injectable } from '@nestjs/common';
import type { PoolClient, QueryResultRow } from 'pg';
import { DataSource } from 'typeorm';
import { APP_NAME } from '../platform.module';
import type { Transaction } from './transaction-runner';

/**
 * The one way repositories talk to PostgreSQL: SQL they write themselves, with rows typed by the
 * table's declared shape. TypeORM keeps the pool, the migrations and the transactions.
 *
 * `prepared()` runs a named prepared statement on a connection of TypeORM's pool: each pooled
 * connection parses and plans it once and then only binds and executes it, most of the cost of a
 * short read, with the pool's limits and failures. Prepared statements name their columns (no
 * `SELECT *`), so a later migration never changes a cached statement's result type.
 */
@Injectable()
export class Sql {
  constructor(
    private readonly dataSource: DataSource,
    @Inject(APP_NAME) private readonly app: string,
  ) {}

  /**
   * The rows of one statement, inside `tx` when given (RETURNING rows for writes): TypeORM's
   * driver answers an UPDATE or DELETE with `[rows, affected]`, an INSERT or SELECT with the rows.
   */
  async rows<T>(text: string, values: readonly unknown[] = [], tx?: Transaction): Promise<T[]> {
    const result = (await (tx ?? this.dataSource.manager).query(text, [...values])) as unknown[];
    return (Array.isArray(result[0]) ? result[0] : result) as T[];
  }

  async row<T>(text: string, values: readonly unknown[] = [], tx?: Transaction): Promise<T | null> {
    return (await this.rows<T>(text, values, tx))[0] ?? null;
  }

  async affected(text: string, values: readonly unknown[] = [], tx?: Transaction): Promise<number> {
    const result = (await (tx ?? this.dataSource.manager).query(text, [...values])) as unknown[];
    return Array.isArray(result[0]) && typeof result[1] === 'number' ? result[1] : result.length;
  }

  /** A named prepared statement on the pool, outside any transaction. */
  async prepared<T extends QueryResultRow>(
    name: string,
    text: string,
    values: readonly unknown[],
  ): Promise<T[]> {
    const runner = this.dataSource.createQueryRunner();
    try {
      const client = (await runner.connect()) as PoolClient;
      return (await client.query<T>({ name: `${this.app}.${name}`, text, values: [...values] })).rows;
    } finally {
      await runner.release();
    }
  }
}

/**
 * The parameters of a multi-row write that binds one array per column (`unnest($1::text[], …)`):
 * one array per key, in the order of `keys`, each in the order of `rows`.
 */
export function columns<T, K extends keyof T>(rows: readonly T[], keys: readonly K[]): T[K][][] {
  return keys.map((key) => rows.map((row) => row[key]));
}
