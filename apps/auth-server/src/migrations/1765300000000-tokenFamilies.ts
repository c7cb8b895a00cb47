import type { MigrationInterface, QueryRunner } from 'typeorm';
import {
  tokenExchangeInOneUpdate,
  tokenRefreshInOneUpdate,
} from './1764700000000-tokenGrantsFewerStatements';

const LIVE_BY_PRIMARY_KEY = '(t.revoked_at IS NULL) IS TRUE';
const SETTINGS = '\n      SET enable_seqscan = off';

/** Numbers the pairs of each family by age, a live pair last (only the newest can be live). */
export function numberPairsInFamilies(schema: string): string {
  return `
      UPDATE "${schema}"."token_pairs" t SET generation = n.generation
        FROM (SELECT id, (row_number() OVER (PARTITION BY code_digest
                                             ORDER BY revoked_at IS NULL, created_at, id) - 1)::int AS generation
                FROM "${schema}"."token_pairs") n
       WHERE t.id = n.id AND n.generation <> 0`;
}

/** A family row for every code that has pairs, from its first pair. */
export function familiesOfPairs(schema: string): string {
  return `
      INSERT INTO "${schema}"."token_families" (code_digest, client_id, user_id, created_at)
      SELECT DISTINCT ON (code_digest) code_digest, client_id, user_id, created_at
        FROM "${schema}"."token_pairs" ORDER BY code_digest, generation`;
}

/**
 * Old replicas keep serving while the migrations run (docs/operations.md, "Upgrading to token
 * families"): auth-server of the release before inserts a pair without its generation (a grace
 * re-issue, a code exchanged on the replay path) and no family row. This trigger numbers such a pair
 * as its family's newest and adds the family, so a later disconnect or suspension finds it. Today's
 * auth-server always names the generation, so for it the trigger's WHEN is all it costs. A later
 * release drops it, once no replica of the release before can be left.
 */
const NUMBER_PAIRS_OF_EARLIER_RELEASE = `
      CREATE FUNCTION "auth"."token_pairs_number_in_family"() RETURNS trigger
      LANGUAGE plpgsql
      SET search_path = auth, pg_temp
      AS $fn$
      BEGIN
        NEW.generation := (SELECT coalesce(max(p.generation) + 1, 0) FROM token_pairs p
                            WHERE p.code_digest = NEW.code_digest);
        INSERT INTO token_families (code_digest, client_id, user_id)
          VALUES (NEW.code_digest, NEW.client_id, NEW.user_id)
          ON CONFLICT (code_digest) DO NOTHING;
        RETURN NEW;
      END
      $fn$`;

/**
 * A rotation that PostgreSQL can write as a HOT update (docs/architecture.md, "Token endpoint",
 * step 17). Every refresh marks its pair rotated (`revoked_at`) and inserts the next one. While two
 * partial indexes on live pairs (`WHERE revoked_at IS NULL`) named the column, that UPDATE wrote a
 * new entry into every index of the table and the INSERT into seven: twelve B-tree insertions per
 * refresh. Without them the UPDATE stays on its page and touches no index (the table keeps room
 * for it: fillfactor 50), and the INSERT writes five.
 *
 * Disconnects and suspensions found a member's or a partner's live pairs through those indexes.
 * They now go through families, so they still read one row per grant, not every rotation of the
 * last 90 days:
 * - `token_families`, one row per code that issued tokens (its member and partner), written by
 *   the exchange, indexed by partner and member;
 * - `token_pairs.generation`, the pair's place in its family (0 for the code's pair, one more for
 *   each rotation or re-issue), unique per family. Only the newest pair of a family can be live:
 *   every rotation and re-issue ends the family's newest pair in the transaction that adds the
 *   next, under the family lock. So a family's live pair is one index probe away.
 *
 * `token_pairs_by_code` is replaced by the unique (code_digest, generation) index, which serves the
 * family revocations that used it. Existing pairs are numbered by age within their family (a live
 * pair last); each family gets its row from its pairs.
 */
export class TokenFamilies1765300000000 implements MigrationInterface {
  name = 'TokenFamilies1765300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "auth"."token_pairs" ADD COLUMN "generation" integer NOT NULL DEFAULT 0`);
    // Dropped first, so the numbering below maintains four indexes, not seven.
    await q.query(`DROP INDEX "auth"."token_pairs_by_code"`);
    await q.query(`DROP INDEX "auth"."token_pairs_live_by_member"`);
    await q.query(`DROP INDEX "auth"."token_pairs_live_by_client"`);
    await q.query(numberPairsInFamilies('auth'));
    await q.query(`ALTER TABLE "auth"."token_pairs" ALTER COLUMN "generation" DROP DEFAULT`);
    await q.query(
      `CREATE UNIQUE INDEX "token_pairs_family_generation" ON "auth"."token_pairs" ("code_digest", "generation")`,
    );

    await q.query(`
      CREATE TABLE "auth"."token_families" (
        "code_digest" text PRIMARY KEY,
        "client_id" text NOT NULL,
        "user_id" text NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(familiesOfPairs('auth'));
    await q.query(
      `CREATE INDEX "token_families_by_partner_member" ON "auth"."token_families" ("client_id", "user_id")`,
    );

    await q.query(`ALTER TABLE "auth"."token_pairs" SET (fillfactor = 50)`);

    await q.query(tokenRefreshInOneUpdate(LIVE_BY_PRIMARY_KEY, SETTINGS, true));
    await q.query(tokenExchangeInOneUpdate(SETTINGS, true));
    await q.query(NUMBER_PAIRS_OF_EARLIER_RELEASE);
    await q.query(
      `CREATE TRIGGER "token_pairs_number_in_family" BEFORE INSERT ON "auth"."token_pairs"
         FOR EACH ROW WHEN (NEW.generation IS NULL) EXECUTE FUNCTION "auth"."token_pairs_number_in_family"()`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER "token_pairs_number_in_family" ON "auth"."token_pairs"`);
    await q.query(`DROP FUNCTION "auth"."token_pairs_number_in_family"()`);
    await q.query(tokenExchangeInOneUpdate(SETTINGS));
    await q.query(tokenRefreshInOneUpdate(LIVE_BY_PRIMARY_KEY, SETTINGS));
    await q.query(`ALTER TABLE "auth"."token_pairs" RESET (fillfactor)`);
    await q.query(
      `CREATE INDEX "token_pairs_live_by_member" ON "auth"."token_pairs" ("user_id", "client_id") WHERE "revoked_at" IS NULL`,
    );
    await q.query(
      `CREATE INDEX "token_pairs_live_by_client" ON "auth"."token_pairs" ("client_id") WHERE "revoked_at" IS NULL`,
    );
    await q.query(`DROP TABLE "auth"."token_families"`);
    await q.query(`CREATE INDEX "token_pairs_by_code" ON "auth"."token_pairs" ("code_digest")`);
    await q.query(`DROP INDEX "auth"."token_pairs_family_generation"`);
    await q.query(`ALTER TABLE "auth"."token_pairs" DROP COLUMN "generation"`);
  }
}
