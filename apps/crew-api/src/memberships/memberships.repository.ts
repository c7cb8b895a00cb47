import { Injectable } from '@nestjs/common';
import type { CrewMemberSummary } from '@svc/contracts';
import { TransactionRunner, type Transaction } from '@svc/platform';
import type { MembershipSource, MembershipTier } from '../members/membership.entity';

export interface CurrentMembership {
  readonly tier: MembershipTier;
  readonly source: MembershipSource;
  readonly sponsorshipId: string | null;
  readonly expiresAt: Date | null;
  /** The seat whose premium was dropped last (a repeated drop for it is answered as a drop). */
  readonly droppedSponsorshipId: string | null;
}

export interface SponsoredTerm {
  readonly sponsorClientId: string;
  readonly sponsorshipId: string;
  readonly expiresAt: Date;
}

/** Memberships as entitlements: read and changed under the member's lock (RecordWriter). */
@Injectable()
export class MembershipsRepository {
  constructor(private readonly transactions: TransactionRunner) {}

  async current(tx: Transaction, userId: string): Promise<CurrentMembership | undefined> {
    const rows = await tx.query<
      {
        tier: MembershipTier;
        source: MembershipSource;
        sponsorship_id: string | null;
        expires_at: Date | null;
        dropped_sponsorship_id: string | null;
      }[]
    >(
      `SELECT tier, source, sponsorship_id, expires_at, dropped_sponsorship_id FROM memberships WHERE user_id = $1`,
      [userId],
    );
    const r = rows[0];
    return (
      r && {
        tier: r.tier,
        source: r.source,
        sponsorshipId: r.sponsorship_id,
        expiresAt: r.expires_at,
        droppedSponsorshipId: r.dropped_sponsorship_id,
      }
    );
  }

  /** Premium from a seat, since now (or, for the same seat, only a new term end). */
  async sponsor(tx: Transaction, userId: string, term: SponsoredTerm, renew: boolean): Promise<void> {
    await tx.query(
      `INSERT INTO memberships (user_id, tier, source, since, sponsor_client_id, sponsorship_id, expires_at, updated_at)
       VALUES ($1, 'premium', 'sponsored', now(), $2, $3, $4, now())
       ON CONFLICT (user_id) DO UPDATE
         SET tier = 'premium', source = 'sponsored',
             since = CASE WHEN $5::boolean THEN memberships.since ELSE now() END,
             sponsor_client_id = $2, sponsorship_id = $3, expires_at = $4, updated_at = now()`,
      [userId, term.sponsorClientId, term.sponsorshipId, term.expiresAt, renew],
    );
  }

  /** Back to the free tier the member holds on their own. */
  async unsponsor(tx: Transaction, userId: string): Promise<void> {
    await tx.query(
      `UPDATE memberships
          SET tier = 'free', source = 'self', since = now(), sponsor_client_id = NULL,
              dropped_sponsorship_id = sponsorship_id, sponsorship_id = NULL, expires_at = NULL,
              updated_at = now()
        WHERE user_id = $1`,
      [userId],
    );
  }

  /** One indexed look-up for the whole list (crew_members.email is unique and normalised). */
  async findByEmails(emails: readonly string[]): Promise<CrewMemberSummary[]> {
    if (emails.length === 0) return [];
    const rows = await this.transactions.outside.query<{ user_id: string; email: string; name: string }[]>(
      `SELECT user_id, email, name FROM crew_members WHERE email = ANY($1::text[])`,
      [emails],
    );
    return rows.map((r) => ({ user_id: r.user_id, email: r.email, name: r.name }));
  }
}
