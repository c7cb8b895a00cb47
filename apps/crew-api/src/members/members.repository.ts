import { Injectable } from '@nestjs/common';
import { Sql, type Transaction } from '@svc/platform';
import { instant, memberLookups, utc } from '../records/sql-time';
import type { CrewMember } from './crew-member.entity';
import type { Membership } from './membership.entity';

/** `/v1/me` and the data export in one row: the profile and its membership, timestamps API-ready. */
export interface ProfileRow
  extends
    Pick<CrewMember, 'userId' | 'email' | 'name' | 'role' | 'country' | 'photoUrl'>,
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

/** The profile as PostgreSQL answers it: timestamps still the text of their UTC wall time. */
type ProfileText = Omit<ProfileRow, 'updatedAtExact'>;

@Injectable()
export class MembersRepository {
  constructor(private readonly sql: Sql) {}

  /** A member without a membership row reads as free and self-paid since creation. */
  private readonly profiles = memberLookups((userIds) =>
    this.sql.prepared<ProfileText>(
      'profiles',
      `SELECT m.user_id AS "userId", m.email, m.name, m.role, m.country, m.photo_url AS "photoUrl",
              ${utc('greatest(m.record_updated_at, ms.updated_at)')} AS "updatedAt",
              coalesce(ms.tier, 'free') AS tier,
              coalesce(ms.source, 'self') AS source,
              ${utc('coalesce(ms.since, m.created_at)')} AS since,
              ms.sponsor_client_id AS "sponsorClientId",
              ${utc('ms.expires_at')} AS "expiresAt"
         FROM crew_members m
         LEFT JOIN memberships ms ON ms.user_id = m.user_id
        WHERE m.user_id = ANY($1::text[])`,
      [userIds],
    ),
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
