import type { MigrationInterface, QueryRunner } from 'typeorm';

const FUNCTIONS = [
  `"auth"."token_refresh"(text, text, text, text[], text, text, text, timestamptz, timestamptz, timestamptz, text)`,
  `"auth"."token_refresh_batch"(text[], text[], text[], text[], text[], text[], timestamptz[], timestamptz[], timestamptz[], text[])`,
  `"auth"."token_exchange"(text, text, text, text, text, text, text, text, timestamptz, timestamptz, timestamptz)`,
];

/**
 * The grant functions never scan a table (docs/architecture.md, "Token endpoint"). Every statement
 * they run finds its rows by a unique key (a token's digest, a pair's id, a code's digest, a
 * partner, a consent). PL/pgSQL keeps a statement's plan for the life of the connection, and after
 * five calls a generic one: a plan made while `token_pairs` held a few rows was a sequential scan,
 * which the connection then kept while the table grew. Under load PostgreSQL's CPU per refresh
 * climbed round after round (200 µs to 2.7 ms in a minute), until an ANALYZE replaced the plan.
 * `enable_seqscan = off` inside these functions leaves the planner the index at any table size.
 *
 * A later CREATE OR REPLACE of one of these functions resets its settings: it must set this again.
 */
export class TokenGrantsIndexPlans1765000000000 implements MigrationInterface {
  name = 'TokenGrantsIndexPlans1765000000000';

  async up(q: QueryRunner): Promise<void> {
    for (const fn of FUNCTIONS) await q.query(`ALTER FUNCTION ${fn} SET enable_seqscan = off`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const fn of FUNCTIONS) await q.query(`ALTER FUNCTION ${fn} RESET enable_seqscan`);
  }
}
