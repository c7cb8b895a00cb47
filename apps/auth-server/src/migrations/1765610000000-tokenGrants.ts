import type { MigrationInterface, QueryRunner } from 'typeorm';
import { tokenGrantsSql } from '../tokens/token-grants';

/** tokens/token-grants.sql's functions, created or replaced; reverting keeps them for the release before. */
export class TokenGrants1765610000000 implements MigrationInterface {
  name = 'TokenGrants1765610000000';
  async up(q: QueryRunner): Promise<void> {
    await q.query(tokenGrantsSql());
  }
  async down(): Promise<void> {}
}
