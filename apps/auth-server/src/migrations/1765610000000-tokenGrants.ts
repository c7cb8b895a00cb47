import type { MigrationInterface, QueryRunner } from 'typeorm';
import { tokenGrantsSql } from '../tokens/token-grants';

/**
 * The token grants' functions from tokens/token-grants.sql, their one text: created on a new
 * database, replaced where the baseline created them (same rules, client check now client_check).
 * Reverting keeps them, as the release before calls them the same way.
 */
export class TokenGrants1765610000000 implements MigrationInterface {
  name = 'TokenGrants1765610000000';
  async up(q: QueryRunner): Promise<void> {
    await q.query(tokenGrantsSql());
  }
  async down(): Promise<void> {}
}
