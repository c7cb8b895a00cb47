import { Inject, Injectable } from '@nestjs/common';
import type { Pool, PoolClient, QueryResult, QueryResultRow } from 'pg';
import { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import { APP_NAME } from '../platform.module';
import { returnedRows, type Transaction } from './transaction-runner';

/**
 * The one way repositories talk to PostgreSQL: SQL they write themselves, with rows typed by the
 * table's declared shape. TypeORM keeps the pool, the migrations and the transactions.
 *
 * `prepared()` runs a named prepared statement on TypeORM's pool: each pooled connection parses
 * and plans the statement once and then only binds and executes it, which is most of the cost of
 * a short read. Same pool, so the same limits apply (2 s to connect, the session's statement and
 * lock timeouts) and the same failures (503 when the database is unreachable). Prepared
 * statements name their columns (no `SELECT *`), so a later migration never changes a cached
 * statement's result type.
 */
@Injectable()
export class Sql {
  constructor(
    private readonly dataSource: DataSource,
    @Inject(APP_NAME) private readonly app: string,
  ) {}

  /** The rows of one statement, inside `tx` when given (RETURNING rows for writes). */
  async rows<T>(text: string, values: readonly unknown[] = [], tx?: Transaction): Promise<T[]> {
    return returnedRows<T>(await (tx ?? this.dataSource.manager).query(text, [...values]));
  }

  /** The first row of one statement, or null. */
  async row<T>(text: string, values: readonly unknown[] = [], tx?: Transaction): Promise<T | null> {
    return (await this.rows<T>(text, values, tx))[0] ?? null;
  }

  /** How many rows an UPDATE or DELETE touched. */
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
    return (await this.pool.query<T>({ name: `${this.app}.${name}`, text, values: [...values] })).rows;
  }

  /**
   * A READ COMMITTED transaction whose first statement is sent together with BEGIN: one
   * simple-protocol message, so one round trip instead of two; then `then` (work that must happen
   * before the change is visible, such as a Redis write), then COMMIT, or ROLLBACK when anything
   * throws. A connection that failed to roll back is dropped, not returned to the pool. The
   * statement's values are inlined as literals by pg's own escaping (`escapeLiteral`): strings,
   * numbers, dates, null and arrays of strings only. It is parsed each time (a function call parses
   * in microseconds; a plpgsql function's own statements keep their plans per connection).
   */
  async beginWith<T extends QueryResultRow, R>(
    text: string,
    values: readonly SqlLiteral[],
    then: (rows: T[]) => Promise<R>,
  ): Promise<R> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      const inlined = text.replace(/\$(\d+)/g, (_, n: string) => literal(client, values[Number(n) - 1]));
      const results = (await client.query(`BEGIN; ${inlined}`)) as unknown as QueryResult<T>[];
      const result = await then(results[1].rows);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch((rollbackFailed: Error) => {
        broken = rollbackFailed;
      });
      throw err;
    } finally {
      client.release(broken);
    }
  }

  private get pool(): Pool {
    return (this.dataSource.driver as PostgresDriver).master as Pool;
  }
}

export type SqlLiteral = string | number | Date | null | readonly string[];

function literal(client: PoolClient, value: SqlLiteral | undefined): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error('a literal number must be finite');
    return String(value);
  }
  if (value instanceof Date) return client.escapeLiteral(value.toISOString());
  if (typeof value === 'string') return client.escapeLiteral(value);
  return `ARRAY[${value.map((v) => client.escapeLiteral(v)).join(', ')}]::text[]`;
}

/**
 * The parameters of a multi-row write that binds one array per column (`unnest($1::text[], …)`):
 * one array per key, in the order of `keys`, each in the order of `rows`.
 */
export function columns<T, K extends keyof T>(rows: readonly T[], keys: readonly K[]): T[K][][] {
  return keys.map((key) => rows.map((row) => row[key]));
}
