import { Injectable } from '@nestjs/common';
import { Sql, type Transaction } from '@svc/platform';
import type { CrewMember } from '../members/crew-member.entity';
import { instant, utc, type Instant } from './sql-time';

/** The member row as a write sees it, locked until the write commits. */
export type LockedMember = CrewMember;

/** The lock and the clock every record write goes through. */
@Injectable()
export class RecordsRepository {
  constructor(private readonly sql: Sql) {}

  /** Locks the member's row: one member's writes queue here, so their write times are in commit order. */
  async lockMember(tx: Transaction, userId: string): Promise<LockedMember | undefined> {
    const member = await this.sql.row<CrewMember>(
      `SELECT user_id AS "userId", email, name, role, country, photo_url AS "photoUrl",
              ${utc('record_updated_at')} AS "recordUpdatedAt"
         FROM crew_members WHERE user_id = $1 FOR UPDATE`,
      [userId],
      tx,
    );
    return member ? { ...member, recordUpdatedAt: instant(member.recordUpdatedAt).iso } : undefined;
  }

  /**
   * Takes the write time under the lock as the record's (and vessel history's) latest change:
   * `clock_timestamp()` (now() may predate an earlier commit), at least 1 µs past the previous
   * write, so it is later than any snapshot a reader saw: scans' `as_of` stays stable.
   */
  async stamp(tx: Transaction, userId: string, vessels: boolean): Promise<Instant> {
    const written = await this.sql.row<{ t: string }>(
      `WITH w AS (
         SELECT greatest(clock_timestamp(), record_updated_at + interval '1 microsecond') AS t
           FROM crew_members WHERE user_id = $1
       ), updated AS (
         UPDATE crew_members m
            SET record_updated_at = w.t,
                vessels_updated_at = CASE WHEN $2::boolean THEN w.t ELSE m.vessels_updated_at END
           FROM w
          WHERE m.user_id = $1
         RETURNING w.t
       )
       SELECT ${utc('t')} AS t FROM updated`,
      [userId, vessels],
      tx,
    );
    if (!written?.t) throw new Error(`no write time for ${userId}: stamp() needs the locked member row`);
    return instant(written.t);
  }
}
