import { Injectable } from '@nestjs/common';
import type { CrewMemberSummary } from '@svc/contracts';
import { Sql, type Transaction } from '@svc/platform';
import type { Membership } from '../members/membership.entity';

export type CurrentMembership = Pick<
  Membership,
  'tier' | 'source' | 'sponsorshipId' | 'expiresAt' | 'droppedSponsorshipId'
>;

/** A sponsored membership's term: the sponsor, the seat and the end, none of them null. */
export type SponsoredTerm = {
  readonly [K in 'sponsorClientId' | 'sponsorshipId' | 'expiresAt']: NonNullable<Membership[K]>;
};

/** Memberships as entitlements: read and changed under the member's lock (RecordWriter). */
@Injectable()
export class MembershipsRepository {
  constructor(private readonly sql: Sql) {}

  async current(tx: Transaction, userId: string): Promise<CurrentMembership | null> {
    return this.sql.row<CurrentMembership>(
      `SELECT tier, source, sponsorship_id AS "sponsorshipId", expires_at AS "expiresAt",
              dropped_sponsorship_id AS "droppedSponsorshipId"
         FROM memberships WHERE user_id = $1`,
      [userId],
      tx,
    );
  }

  /** Premium from a seat, since now (or, for the same seat, only a new term end). */
  async sponsor(tx: Transaction, userId: string, term: SponsoredTerm, renew: boolean): Promise<void> {
    await this.sql.rows(
      `INSERT INTO memberships (user_id, tier, source, since, sponsor_client_id, sponsorship_id, expires_at, updated_at)
       VALUES ($1, 'premium', 'sponsored', now(), $2, $3, $4, now())
       ON CONFLICT (user_id) DO UPDATE
         SET tier = 'premium', source = 'sponsored',
             since = CASE WHEN $5::boolean THEN memberships.since ELSE now() END,
             sponsor_client_id = $2, sponsorship_id = $3, expires_at = $4, updated_at = now()`,
      [userId, term.sponsorClientId, term.sponsorshipId, term.expiresAt, renew],
      tx,
    );
  }

  /** Back to the free tier the member holds on their own. */
  async unsponsor(tx: Transaction, userId: string): Promise<void> {
    await this.sql.affected(
      `UPDATE memberships
          SET tier = 'free', source = 'self', since = now(), sponsor_client_id = NULL,
              dropped_sponsorship_id = sponsorship_id, sponsorship_id = NULL, expires_at = NULL,
              updated_at = now()
        WHERE user_id = $1`,
      [userId],
      tx,
    );
  }

  /** One indexed look-up for the whole list (crew_members.email is unique and normalised). */
  async findByEmails(emails: readonly string[]): Promise<CrewMemberSummary[]> {
    if (emails.length === 0) return [];
    return this.sql.rows<CrewMemberSummary>(
      `SELECT user_id, email, name FROM crew_members WHERE email = ANY($1::text[])`,
      [emails],
    );
  }
}
