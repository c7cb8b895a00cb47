import { Injectable } from '@nestjs/common';
import { GroupBatcher, TransactionRunner, type Transaction, Sql } from '@svc/platform';
import { instant, utc } from '../records/sql-time';
import type { MemberProfileResponse } from './dto/member-profile.response';
import type { MemberRegistration } from './dto/member-registration.dto';
import type { MembershipSource, MembershipTier } from './membership.entity';

/** `/v1/me` in one row: the profile and its membership. Timestamps are API-ready strings. */
export interface ProfileRow {
  readonly userId: string;
  readonly name: string;
  readonly role: string;
  readonly country: string;
  readonly photoUrl: string | null;
  /** The later of the profile's and the membership's last change, ms (shown) and µs (compared). */
  readonly updatedAt: string;
  readonly updatedAtExact: string;
  readonly tier: MembershipTier;
  readonly source: MembershipSource;
  readonly since: string;
  readonly sponsorClientId: string | null;
  readonly expiresAt: string | null;
}

export interface ProfileChanges {
  readonly name?: string;
  readonly role?: string;
  readonly country?: string;
  readonly photoUrl?: string | null;
}

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

interface ProfileDbRow {
  readonly user_id: string;
  readonly name: string;
  readonly role: string;
  readonly country: string;
  readonly photo_url: string | null;
  readonly updated_at: string;
  readonly tier: MembershipTier;
  readonly source: MembershipSource;
  readonly since: string;
  readonly sponsor_client_id: string | null;
  readonly expires_at: string | null;
}

@Injectable()
export class MembersRepository {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly reads: Sql,
  ) {}

  /**
   * `/v1/me` lookups share statements: those made in one turn of the event loop go together
   * (GroupBatcher gathering the turn, `user_id = ANY($1)`), several batches at once. Under load
   * the round trip, not the row, was the cost: batching took a request's PostgreSQL CPU from ~70
   * to ~12 µs. A member without a membership row (none is created without one, but the block is
   * always shown) reads as free and self-paid since the record was created.
   */
  private readonly profiles = new GroupBatcher<string, ProfileDbRow | undefined>(
    async (userIds) => {
      const rows = await this.reads.prepared<ProfileDbRow>(
        'profiles',
        `SELECT m.user_id, m.name, m.role, m.country, m.photo_url,
              ${utc('greatest(m.record_updated_at, ms.updated_at)')} AS updated_at,
              coalesce(ms.tier, 'free') AS tier,
              coalesce(ms.source, 'self') AS source,
              ${utc('coalesce(ms.since, m.created_at)')} AS since,
              ms.sponsor_client_id,
              ${utc('ms.expires_at')} AS expires_at
         FROM crew_members m
         LEFT JOIN memberships ms ON ms.user_id = m.user_id
        WHERE m.user_id = ANY($1::text[])`,
        [[...new Set(userIds)]],
      );
      const byId = new Map(rows.map((r) => [r.user_id, r]));
      return userIds.map((id) => byId.get(id));
    },
    PROFILES_PER_STATEMENT,
    PROFILE_STATEMENTS_IN_FLIGHT,
    true,
  );

  async profile(userId: string): Promise<ProfileRow | undefined> {
    const r = await this.profiles.submit(userId);
    if (!r) return undefined;
    const updated = instant(r.updated_at);
    return {
      userId: r.user_id,
      name: r.name,
      role: r.role,
      country: r.country,
      photoUrl: r.photo_url,
      updatedAt: updated.iso,
      updatedAtExact: updated.exact,
      tier: r.tier,
      source: r.source,
      since: instant(r.since).iso,
      sponsorClientId: r.sponsor_client_id,
      expiresAt: r.expires_at === null ? null : instant(r.expires_at).iso,
    };
  }

  /** Writes the given fields (the caller holds the member's lock). */
  async updateProfile(tx: Transaction, userId: string, changes: ProfileChanges): Promise<void> {
    const fields = (Object.keys(COLUMNS) as (keyof ProfileChanges)[]).filter((k) => changes[k] !== undefined);
    if (fields.length === 0) return;
    await tx.query(
      `UPDATE crew_members SET ${fields.map((f, i) => `${COLUMNS[f]} = $${i + 2}`).join(', ')}
        WHERE user_id = $1`,
      [userId, ...fields.map((f) => changes[f])],
    );
  }

  /**
   * A new member's record head and free membership (one write time for every column: the table
   * requires vessels_updated_at <= record_updated_at); false when the id or the e-mail is taken
   * (the unique keys decide, so two registrations of one e-mail cannot both succeed).
   */
  async insertMember(tx: Transaction, m: MemberRegistration & { userId: string }): Promise<boolean> {
    const rows = await tx.query<{ user_id: string }[]>(
      `INSERT INTO crew_members (user_id, email, name, role, country, photo_url,
                                 record_updated_at, vessels_updated_at, created_at)
       SELECT $1, $2, $3, $4, $5, $6, t, t, t FROM clock_timestamp() AS t
       ON CONFLICT DO NOTHING
       RETURNING user_id`,
      [m.userId, m.email, m.name, m.role, m.country, m.photoUrl],
    );
    if (rows.length === 0) return false;
    await tx.query(
      `INSERT INTO memberships (user_id, tier, source, since, updated_at)
       VALUES ($1, 'free', 'self', clock_timestamp(), clock_timestamp())`,
      [m.userId],
    );
    return true;
  }

  /** The profile as written, inside the writing transaction. */
  async head(tx: Transaction, userId: string): Promise<MemberProfileResponse> {
    const rows = await tx.query<
      {
        user_id: string;
        email: string;
        name: string;
        role: string;
        country: string;
        photo_url: string | null;
        record_updated_at: string;
      }[]
    >(
      `SELECT user_id, email, name, role, country, photo_url, ${utc('record_updated_at')} AS record_updated_at
         FROM crew_members WHERE user_id = $1`,
      [userId],
    );
    const r = rows[0];
    if (!r) throw new Error(`member ${userId} vanished inside its own transaction`);
    return { ...r, record_updated_at: instant(r.record_updated_at).iso };
  }

  async findByEmail(email: string): Promise<{ userId: string; email: string } | undefined> {
    const rows = await this.transactions.outside.query<{ user_id: string; email: string }[]>(
      'SELECT user_id, email FROM crew_members WHERE email = $1',
      [email],
    );
    return rows[0] ? { userId: rows[0].user_id, email: rows[0].email } : undefined;
  }
}
