import { Injectable } from '@nestjs/common';
import { GroupBatcher, Sql, type Transaction } from '@svc/platform';
import { instant, utc } from '../records/sql-time';
import type { CrewMember } from './crew-member.entity';
import type { Membership } from './membership.entity';

/** `/v1/me` in one row: the profile and its membership. Timestamps are API-ready strings. */
export interface ProfileRow
  extends
    Pick<CrewMember, 'userId' | 'name' | 'role' | 'country' | 'photoUrl'>,
    Pick<Membership, 'tier' | 'source' | 'sponsorClientId'> {
  /** The later of the profile's and the membership's last change, ms (shown) and µs (compared). */
  readonly updatedAt: string;
  readonly updatedAtExact: string;
  readonly since: string;
  readonly expiresAt: string | null;
}

export type ProfileChanges = Partial<Pick<CrewMember, 'name' | 'role' | 'country' | 'photoUrl'>>;

const COLUMNS: Readonly<Record<keyof ProfileChanges, string>> = {
  name: 'name',
  role: 'role',
  country: 'country',
  photoUrl: 'photo_url',
};

/** Members per `/v1/me` statement: one array parameter, a short index scan. */
const PROFILES_PER_STATEMENT = 100;
/** Below the pool's 10 connections: the other reads of the app keep theirs. */
const PROFILE_STATEMENTS_IN_FLIGHT = 8;

/** The profile as PostgreSQL answers it: timestamps still the text of their UTC wall time. */
type ProfileText = Omit<ProfileRow, 'updatedAtExact'>;

@Injectable()
export class MembersRepository {
  constructor(private readonly sql: Sql) {}

  /**
   * `/v1/me` lookups of one event-loop turn share a statement (under load the round trip is the
   * cost). A member without a membership row reads as free and self-paid since creation.
   */
  private readonly profiles = new GroupBatcher<string, ProfileText | undefined>(
    async (userIds) => {
      const rows = await this.sql.prepared<ProfileText>(
        'profiles',
        `SELECT m.user_id AS "userId", m.name, m.role, m.country, m.photo_url AS "photoUrl",
              ${utc('greatest(m.record_updated_at, ms.updated_at)')} AS "updatedAt",
              coalesce(ms.tier, 'free') AS tier,
              coalesce(ms.source, 'self') AS source,
              ${utc('coalesce(ms.since, m.created_at)')} AS since,
              ms.sponsor_client_id AS "sponsorClientId",
              ${utc('ms.expires_at')} AS "expiresAt"
         FROM crew_members m
         LEFT JOIN memberships ms ON ms.user_id = m.user_id
        WHERE m.user_id = ANY($1::text[])`,
        [[...new Set(userIds)]],
      );
      const byId = new Map(rows.map((r) => [r.userId, r]));
      return userIds.map((id) => byId.get(id));
    },
    PROFILES_PER_STATEMENT,
    PROFILE_STATEMENTS_IN_FLIGHT,
    true,
  );

  async profile(userId: string): Promise<ProfileRow | undefined> {
    const r = await this.profiles.submit(userId);
    if (!r) return undefined;
    const updated = instant(r.updatedAt);
    return {
      ...r,
      updatedAt: updated.iso,
      updatedAtExact: updated.exact,
      since: instant(r.since).iso,
      expiresAt: r.expiresAt === null ? null : instant(r.expiresAt).iso,
    };
  }

  /** Writes the given fields (the caller holds the member's lock). */
  async updateProfile(tx: Transaction, userId: string, changes: ProfileChanges): Promise<void> {
    const fields = (Object.keys(COLUMNS) as (keyof ProfileChanges)[]).filter((k) => changes[k] !== undefined);
    if (fields.length === 0) return;
    await this.sql.affected(
      `UPDATE crew_members SET ${fields.map((f, i) => `${COLUMNS[f]} = $${i + 2}`).join(', ')}
        WHERE user_id = $1`,
      [userId, ...fields.map((f) => changes[f])],
      tx,
    );
  }

  /**
   * A new member's record head and free membership, one write time for every column; null when the
   * id or the e-mail is taken (the unique keys decide, so concurrent sign-ups cannot both succeed).
   */
  async insertMember(tx: Transaction, m: Omit<CrewMember, 'recordUpdatedAt'>): Promise<CrewMember | null> {
    const member = await this.sql.row<CrewMember>(
      `INSERT INTO crew_members (user_id, email, name, role, country, photo_url,
                                 record_updated_at, vessels_updated_at, created_at)
       SELECT $1, $2, $3, $4, $5, $6, t, t, t FROM clock_timestamp() AS t
       ON CONFLICT DO NOTHING
       RETURNING user_id AS "userId", email, name, role, country, photo_url AS "photoUrl",
                 ${utc('record_updated_at')} AS "recordUpdatedAt"`,
      [m.userId, m.email, m.name, m.role, m.country, m.photoUrl],
      tx,
    );
    if (!member) return null;
    await this.sql.rows(
      `INSERT INTO memberships (user_id, tier, source, since, updated_at)
       VALUES ($1, 'free', 'self', clock_timestamp(), clock_timestamp())`,
      [m.userId],
      tx,
    );
    return { ...member, recordUpdatedAt: instant(member.recordUpdatedAt).iso };
  }

  async findByEmail(email: string): Promise<Pick<CrewMember, 'userId' | 'email'> | null> {
    return this.sql.row('SELECT user_id AS "userId", email FROM crew_members WHERE email = $1', [email]);
  }
}
