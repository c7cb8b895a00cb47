import { Injectable } from '@nestjs/common';
import { returnedRows, TransactionRunner, type Transaction } from '@svc/platform';
import type { SeatStatus } from './seat.entity';

/** A seat as the service works with it; `invitedAtExact` (µs, UTC) is the list's keyset value. */
export interface SeatRow {
  readonly sponsorshipId: string;
  readonly clientId: string;
  readonly email: string;
  readonly externalRef: string | null;
  readonly status: SeatStatus;
  readonly userId: string | null;
  readonly crewName: string | null;
  readonly invitedAt: Date;
  readonly invitedAtExact: string;
  readonly activatedAt: Date | null;
  readonly expiresAt: Date;
}

export interface NewSeat {
  readonly sponsorshipId: string;
  readonly clientId: string;
  readonly email: string;
  readonly externalRef: string | null;
  readonly expiresAt: Date;
}

/** A status change for the history: who (client_id or `system`) and why. */
export interface SeatChange {
  readonly sponsorshipId: string;
  readonly from: SeatStatus | null;
  readonly to: SeatStatus;
  readonly actor: string;
  readonly reason: string;
}

export interface ListPosition {
  readonly invitedAt: string;
  readonly sponsorshipId: string;
}

/** A seat of a member as their account page shows it (any partner). */
export interface MemberSeatRow {
  readonly clientId: string;
  readonly partnerName: string | null;
  readonly status: 'active' | 'ended' | 'cancelled';
  readonly activatedAt: Date;
  readonly until: Date;
}

export interface ReconcileDiff {
  readonly activeSeats: number;
  readonly toCancel: { readonly sponsorshipId: string; readonly email: string }[];
  readonly missingRefs: string[];
}

interface Row {
  sponsorship_id: string;
  client_id: string;
  email: string;
  external_ref: string | null;
  status: SeatStatus;
  user_id: string | null;
  crew_name: string | null;
  invited_at: Date;
  invited_at_exact: string;
  activated_at: Date | null;
  expires_at: Date;
}

const COLUMNS = `sponsorship_id, client_id, email, external_ref, status, user_id, crew_name, invited_at,
  to_char(invited_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS invited_at_exact,
  activated_at, expires_at`;
const LIVE = `status IN ('invited', 'active')`;
const RETURNED = `sponsorship_id, client_id, email, external_ref, status, user_id, crew_name, invited_at,
  invited_at_exact, activated_at, expires_at`;
/** A seat whose provision found a member and that closes this soon after it was provisioned is a probe. */
export const PROBE_WINDOW = '24 hours';

function toSeat(r: Row): SeatRow {
  return {
    sponsorshipId: r.sponsorship_id,
    clientId: r.client_id,
    email: r.email,
    externalRef: r.external_ref,
    status: r.status,
    userId: r.user_id,
    crewName: r.crew_name,
    invitedAt: r.invited_at,
    invitedAtExact: r.invited_at_exact,
    activatedAt: r.activated_at,
    expiresAt: r.expires_at,
  };
}

/** Every query of the seats; each method is one statement. */
@Injectable()
export class SeatsRepository {
  constructor(private readonly transactions: TransactionRunner) {}

  /**
   * Locks the partner's sponsor row (created on first use, its display name kept current for the
   * members' account pages); answers its own quota, if any.
   */
  async lockSponsor(tx: Transaction, clientId: string, name: string): Promise<number | null> {
    await tx.query(
      `INSERT INTO sponsors (client_id, name) VALUES ($1, $2)
       ON CONFLICT (client_id) DO UPDATE SET name = EXCLUDED.name WHERE sponsors.name IS DISTINCT FROM EXCLUDED.name`,
      [clientId, name],
    );
    const rows = await tx.query<{ seat_quota: number | null }[]>(
      `SELECT seat_quota FROM sponsors WHERE client_id = $1 FOR UPDATE`,
      [clientId],
    );
    return rows[0]?.seat_quota ?? null;
  }

  async countLive(tx: Transaction, clientId: string): Promise<number> {
    const rows = await tx.query<{ n: string }[]>(
      `SELECT count(*) AS n FROM seats WHERE client_id = $1 AND ${LIVE}`,
      [clientId],
    );
    return Number(rows[0].n);
  }

  async findLive(
    tx: Transaction,
    clientId: string,
    by: { readonly email: string } | { readonly externalRef: string },
  ): Promise<SeatRow | undefined> {
    const [column, value] = 'email' in by ? ['email', by.email] : ['external_ref', by.externalRef];
    const rows = await tx.query<Row[]>(
      `SELECT ${COLUMNS} FROM seats WHERE client_id = $1 AND ${column} = $2 AND ${LIVE}`,
      [clientId, value],
    );
    return rows[0] && toSeat(rows[0]);
  }

  async insert(tx: Transaction, seat: NewSeat): Promise<SeatRow> {
    const rows = await tx.query<Row[]>(
      `INSERT INTO seats (sponsorship_id, client_id, email, external_ref, status, invited_at, expires_at, updated_at)
       VALUES ($1, $2, $3, $4, 'invited', clock_timestamp(), $5, clock_timestamp())
       RETURNING ${COLUMNS}`,
      [seat.sponsorshipId, seat.clientId, seat.email, seat.externalRef, seat.expiresAt],
    );
    return toSeat(rows[0]);
  }

  /**
   * `matchedOnProvision`: the provision itself found the member (the answer told the partner the
   * address is a member's), which makes an early close of the seat a probe.
   */
  async activate(
    tx: Transaction,
    sponsorshipId: string,
    userId: string,
    crewName: string,
    matchedOnProvision: boolean,
  ): Promise<SeatRow> {
    const rows = returnedRows<Row>(
      await tx.query(
        `UPDATE seats SET status = 'active', user_id = $2, crew_name = $3, activated_at = clock_timestamp(),
                        matched_on_provision = $4, updated_at = clock_timestamp()
        WHERE sponsorship_id = $1 AND status = 'invited'
        RETURNING ${COLUMNS}`,
        [sponsorshipId, userId, crewName, matchedOnProvision],
      ),
    );
    if (!rows[0]) throw new Error(`seat ${sponsorshipId} was not invited when activated`);
    return toSeat(rows[0]);
  }

  /**
   * Closes live seats (set-based): `ended` or `cancelled`. Answers the seats as closed. Probes are
   * charged to their partner's probe budget in the same statement: seats
   * whose provision found a member, closed within PROBE_WINDOW of being provisioned. Every way a
   * seat closes counts (DELETE, reconcile, member-left, a term the partner set under a day), since
   * each is the partner's choice and each would otherwise be a free way round the budget.
   */
  async close(tx: Transaction, ids: readonly string[], to: 'ended' | 'cancelled'): Promise<SeatRow[]> {
    if (ids.length === 0) return [];
    const rows = returnedRows<Row>(
      await tx.query(
        `WITH closed AS (
         UPDATE seats SET status = $2, closed_at = clock_timestamp(), updated_at = clock_timestamp()
          WHERE sponsorship_id = ANY($1::text[]) AND ${LIVE}
          RETURNING ${COLUMNS}, matched_on_provision
       ), charged AS (
         INSERT INTO probe_charges (sponsorship_id, client_id)
         SELECT sponsorship_id, client_id FROM closed
          WHERE matched_on_provision AND invited_at > clock_timestamp() - $3::interval
         ON CONFLICT DO NOTHING
       )
       SELECT ${RETURNED} FROM closed`,
        [ids, to, PROBE_WINDOW],
      ),
    );
    return rows.map(toSeat);
  }

  async record(tx: Transaction, changes: readonly SeatChange[]): Promise<void> {
    if (changes.length === 0) return;
    await tx.query(
      `INSERT INTO seat_events (sponsorship_id, from_status, to_status, actor, reason)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[])`,
      [
        changes.map((c) => c.sponsorshipId),
        changes.map((c) => c.from),
        changes.map((c) => c.to),
        changes.map((c) => c.actor),
        changes.map((c) => c.reason),
      ],
    );
  }

  async get(clientId: string, sponsorshipId: string): Promise<SeatRow | undefined> {
    const rows = await this.transactions.outside.query<Row[]>(
      `SELECT ${COLUMNS} FROM seats WHERE client_id = $1 AND sponsorship_id = $2`,
      [clientId, sponsorshipId],
    );
    return rows[0] && toSeat(rows[0]);
  }

  async lock(tx: Transaction, clientId: string, sponsorshipId: string): Promise<SeatRow | undefined> {
    const rows = await tx.query<Row[]>(
      `SELECT ${COLUMNS} FROM seats WHERE client_id = $1 AND sponsorship_id = $2 FOR UPDATE`,
      [clientId, sponsorshipId],
    );
    return rows[0] && toSeat(rows[0]);
  }

  /** One page, newest first: `(invited_at, sponsorship_id)` descending, after `position`. */
  async page(
    clientId: string,
    status: SeatStatus | undefined,
    position: ListPosition | undefined,
    limit: number,
  ): Promise<SeatRow[]> {
    const rows = await this.transactions.outside.query<Row[]>(
      `SELECT ${COLUMNS} FROM seats
        WHERE client_id = $1
          AND ($2::text IS NULL OR status = $2)
          AND ($3::timestamptz IS NULL OR (invited_at, sponsorship_id) < ($3::timestamptz, $4::text))
        ORDER BY invited_at DESC, sponsorship_id DESC
        LIMIT $5`,
      [clientId, status ?? null, position?.invitedAt ?? null, position?.sponsorshipId ?? null, limit],
    );
    return rows.map(toSeat);
  }

  /**
   * Reconcile's diff in one statement: the partner's live seats matched by neither their e-mail
   * (against the trimmed, lower-cased refs) nor their external_ref (exact), and the refs (first
   * occurrence, in the order given) that match no live seat. One pass over each side: the seats are
   * tested against the ref arrays with `= ANY`, which PostgreSQL hashes for a bound array (a
   * correlated NOT EXISTS under an OR runs once per seat instead: 10,000 × 10,000 took 20 s), and
   * the refs against the seats with hash anti-joins.
   */
  async diff(
    clientId: string,
    refs: readonly string[],
    normalised: readonly string[],
  ): Promise<ReconcileDiff> {
    const rows = await this.transactions.outside.query<{ kind: string; a: string; b: string | null }[]>(
      `WITH refs AS (
         SELECT r, n, i FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS u(r, n, i)
       ), live AS MATERIALIZED (
         SELECT sponsorship_id, email, external_ref FROM seats WHERE client_id = $1 AND ${LIVE}
       )
       SELECT 'count' AS kind, count(*)::text AS a, NULL AS b, 0 AS i FROM live
       UNION ALL
       (SELECT 'cancel', l.sponsorship_id, l.email, 0 FROM live l
         WHERE NOT (l.email = ANY($3::text[]))
           AND (l.external_ref IS NULL OR NOT (l.external_ref = ANY($2::text[])))
         ORDER BY l.email, l.sponsorship_id)
       UNION ALL
       (SELECT 'missing', m.r, NULL, m.i FROM (
          SELECT DISTINCT ON (refs.r) refs.r, refs.i FROM refs
           WHERE NOT EXISTS (SELECT 1 FROM live WHERE live.email = refs.n)
             AND NOT EXISTS (SELECT 1 FROM live WHERE live.external_ref = refs.r)
           ORDER BY refs.r, refs.i) m
         ORDER BY m.i)`,
      [clientId, refs, normalised],
    );
    let activeSeats = 0;
    const toCancel: ReconcileDiff['toCancel'][number][] = [];
    const missingRefs: string[] = [];
    for (const row of rows) {
      if (row.kind === 'count') activeSeats = Number(row.a);
      else if (row.kind === 'cancel') toCancel.push({ sponsorshipId: row.a, email: row.b ?? '' });
      else missingRefs.push(row.a);
    }
    return { activeSeats, toCancel, missingRefs };
  }

  /** Locks the given seats that are still live (others are skipped), in id order. */
  async lockLive(tx: Transaction, clientId: string, ids: readonly string[]): Promise<SeatRow[]> {
    const rows = await tx.query<Row[]>(
      `SELECT ${COLUMNS} FROM seats
        WHERE client_id = $1 AND sponsorship_id = ANY($2::text[]) AND ${LIVE}
        ORDER BY sponsorship_id FOR UPDATE`,
      [clientId, ids],
    );
    return rows.map(toSeat);
  }

  /** The member's open billed (active) seat of this partner, locked; re-checked after a wait. */
  async lockActiveOf(
    tx: Transaction,
    clientId: string,
    by: { readonly userId: string } | { readonly externalRef: string },
  ): Promise<SeatRow | undefined> {
    const [column, value] = 'userId' in by ? ['user_id', by.userId] : ['external_ref', by.externalRef];
    const rows = await tx.query<Row[]>(
      `SELECT ${COLUMNS} FROM seats WHERE client_id = $1 AND ${column} = $2 AND status = 'active'
        ORDER BY invited_at DESC LIMIT 1 FOR UPDATE`,
      [clientId, value],
    );
    return rows[0] && toSeat(rows[0]);
  }

  /** The partner's most recent seat with this external_ref, whatever its status. */
  async latestByRef(tx: Transaction, clientId: string, externalRef: string): Promise<SeatRow | undefined> {
    const rows = await tx.query<Row[]>(
      `SELECT ${COLUMNS} FROM seats WHERE client_id = $1 AND external_ref = $2
        ORDER BY invited_at DESC LIMIT 1`,
      [clientId, externalRef],
    );
    return rows[0] && toSeat(rows[0]);
  }

  /** Every seat that ever gave this member premium, any partner, newest first. */
  async ofMember(userId: string): Promise<MemberSeatRow[]> {
    const rows = await this.transactions.outside.query<
      {
        client_id: string;
        name: string | null;
        status: MemberSeatRow['status'];
        activated_at: Date;
        until: Date;
      }[]
    >(
      `SELECT s.client_id, p.name, s.status, s.activated_at, coalesce(s.closed_at, s.expires_at) AS until
         FROM seats s LEFT JOIN sponsors p ON p.client_id = s.client_id
        WHERE s.user_id = $1 AND s.activated_at IS NOT NULL
        ORDER BY s.activated_at DESC, s.sponsorship_id DESC
        LIMIT 500`,
      [userId],
    );
    return rows.map((r) => ({
      clientId: r.client_id,
      partnerName: r.name,
      status: r.status,
      activatedAt: r.activated_at,
      until: r.until,
    }));
  }

  /** Live seats past their term, locked; SKIP LOCKED lets every replica's job take its own share. */
  async lockExpired(tx: Transaction, limit: number): Promise<SeatRow[]> {
    const rows = await tx.query<Row[]>(
      `SELECT ${COLUMNS} FROM seats WHERE ${LIVE} AND expires_at <= now()
        ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED`,
      [limit],
    );
    return rows.map(toSeat);
  }

  /** The oldest invited seat of this e-mail (any partner), locked. */
  async lockOldestInvited(tx: Transaction, email: string): Promise<SeatRow | undefined> {
    const rows = await tx.query<Row[]>(
      `SELECT ${COLUMNS} FROM seats WHERE email = $1 AND status = 'invited' AND expires_at > now()
        ORDER BY invited_at, sponsorship_id LIMIT 1 FOR UPDATE SKIP LOCKED`,
      [email],
    );
    return rows[0] && toSeat(rows[0]);
  }
}
