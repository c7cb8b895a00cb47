import { Injectable } from '@nestjs/common';
import { columns, Sql, type Transaction } from '@svc/platform';
import type { SeatChange } from './seat-event.entity';
import { SeatTransitionMetrics } from './seat-transition-metrics';
import type { SeatRow, SeatStatus, Sponsor } from './seat.entity';

export type { SeatChange, SeatRow };

export type NewSeat = Pick<SeatRow, 'sponsorshipId' | 'clientId' | 'email' | 'externalRef' | 'expiresAt'>;

export interface ListPosition {
  readonly invitedAt: string;
  readonly sponsorshipId: string;
}

/** A seat of a member as their account page shows it (any partner). */
export interface MemberSeatRow extends Pick<SeatRow, 'clientId'> {
  readonly partnerName: Sponsor['name'];
  readonly status: Exclude<SeatStatus, 'invited'>;
  readonly activatedAt: Date;
  readonly until: Date;
}

export interface ReconcileDiff {
  readonly activeSeats: number;
  readonly toCancel: { readonly sponsorshipId: string; readonly email: string }[];
  readonly missingRefs: string[];
}

const COLUMNS = `sponsorship_id AS "sponsorshipId", client_id AS "clientId", email, external_ref AS "externalRef",
  status, user_id AS "userId", crew_name AS "crewName", invited_at AS "invitedAt",
  to_char(invited_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS "invitedAtExact",
  activated_at AS "activatedAt", expires_at AS "expiresAt"`;
const LIVE = `status IN ('invited', 'active')`;
const RETURNED = `"sponsorshipId", "clientId", email, "externalRef", status, "userId", "crewName", "invitedAt",
  "invitedAtExact", "activatedAt", "expiresAt"`;
/** A seat whose provision found a member and that closes this soon after it was provisioned is a probe. */
export const PROBE_WINDOW = '24 hours';

/**
 * Live/invited tests for lookups by id, written so the planner cannot match a partial index's
 * predicate: with stale statistics it may read such an index whole instead of the primary key
 * (test/sponsorship/seat-plans.integration-spec.ts).
 */
const LIVE_BY_ID = `(${LIVE}) IS TRUE`;
const INVITED_BY_ID = `(status = 'invited') IS TRUE`;

/** Activates an invited seat by its id ($1): the member's id ($2) and name ($3), found on provision ($4). */
export const ACTIVATE_INVITED_SEAT = `UPDATE seats SET status = 'active', user_id = $2, crew_name = $3,
                        activated_at = clock_timestamp(), matched_on_provision = $4, updated_at = clock_timestamp()
        WHERE sponsorship_id = $1 AND ${INVITED_BY_ID}
        RETURNING ${COLUMNS}`;

/** Closes the live seats of the ids $1 into $2, charging probes (closed within $3 of a provision that found the member). */
export const CLOSE_LIVE_SEATS = `WITH closed AS (
         UPDATE seats SET status = $2, closed_at = clock_timestamp(), updated_at = clock_timestamp()
          WHERE sponsorship_id = ANY($1::text[]) AND ${LIVE_BY_ID}
          RETURNING ${COLUMNS}, matched_on_provision
       ), charged AS (
         INSERT INTO probe_charges (sponsorship_id, client_id)
         SELECT "sponsorshipId", "clientId" FROM closed
          WHERE matched_on_provision AND "invitedAt" > clock_timestamp() - $3::interval
         ON CONFLICT DO NOTHING
       )
       SELECT ${RETURNED} FROM closed`;

/** Every query of the seats: one statement each, plus the `seat_events` rows of its changes. */
@Injectable()
export class SeatsRepository {
  constructor(
    private readonly sql: Sql,
    // Every status change is written by `record`: counting it here misses none.
    private readonly transitions: SeatTransitionMetrics,
  ) {}

  /** Locks the partner's sponsor row (created on first use, its name kept current); answers its own quota, if any. */
  async lockSponsor(tx: Transaction, clientId: string, name: string): Promise<number | null> {
    await this.sql.rows(
      `INSERT INTO sponsors (client_id, name) VALUES ($1, $2)
       ON CONFLICT (client_id) DO UPDATE SET name = EXCLUDED.name WHERE sponsors.name IS DISTINCT FROM EXCLUDED.name`,
      [clientId, name],
      tx,
    );
    const sponsor = await this.sql.row<Pick<Sponsor, 'seatQuota'>>(
      `SELECT seat_quota AS "seatQuota" FROM sponsors WHERE client_id = $1 FOR UPDATE`,
      [clientId],
      tx,
    );
    return sponsor?.seatQuota ?? null;
  }

  /** The partner's seats counted by status, and its own quota if its sponsor row sets one. */
  async summary(
    clientId: string,
  ): Promise<{ readonly counts: Readonly<Record<SeatStatus, number>>; readonly quota: number | null }> {
    const rows = await this.sql.rows<{ status: SeatStatus; n: number }>(
      `SELECT status, count(*)::int AS n FROM seats WHERE client_id = $1 GROUP BY status`,
      [clientId],
    );
    const sponsor = await this.sql.row<Pick<Sponsor, 'seatQuota'>>(
      `SELECT seat_quota AS "seatQuota" FROM sponsors WHERE client_id = $1`,
      [clientId],
    );
    const counts: Record<SeatStatus, number> = { invited: 0, active: 0, ended: 0, cancelled: 0 };
    for (const r of rows) counts[r.status] = r.n;
    return { counts, quota: sponsor?.seatQuota ?? null };
  }

  async countLive(tx: Transaction, clientId: string): Promise<number> {
    const live = await this.sql.row<{ n: string }>(
      `SELECT count(*) AS n FROM seats WHERE client_id = $1 AND ${LIVE}`,
      [clientId],
      tx,
    );
    return Number(live!.n);
  }

  async findLive(
    tx: Transaction,
    clientId: string,
    by: { readonly email: string } | { readonly externalRef: string },
  ): Promise<SeatRow | null> {
    const [column, value] = 'email' in by ? ['email', by.email] : ['external_ref', by.externalRef];
    return this.sql.row<SeatRow>(
      `SELECT ${COLUMNS} FROM seats WHERE client_id = $1 AND ${column} = $2 AND ${LIVE}`,
      [clientId, value],
      tx,
    );
  }

  /** A new invited seat, its provision recorded (the partner as actor). */
  async insert(tx: Transaction, seat: NewSeat): Promise<SeatRow> {
    const inserted = await this.sql.row<SeatRow>(
      `INSERT INTO seats (sponsorship_id, client_id, email, external_ref, status, invited_at, expires_at, updated_at)
       VALUES ($1, $2, $3, $4, 'invited', clock_timestamp(), $5, clock_timestamp())
       RETURNING ${COLUMNS}`,
      [seat.sponsorshipId, seat.clientId, seat.email, seat.externalRef, seat.expiresAt],
      tx,
    );
    const { sponsorshipId, clientId } = seat;
    await this.record(tx, [
      { sponsorshipId, from: null, to: 'invited', actor: clientId, reason: 'provisioned' },
    ]);
    return inserted!;
  }

  /**
   * Activates an invited seat, recorded with its reason: `member_found` (the provision found the
   * member, so an early close is a probe) or `member_registered`.
   */
  async activate(
    tx: Transaction,
    sponsorshipId: string,
    userId: string,
    crewName: string,
    reason: 'member_found' | 'member_registered',
  ): Promise<SeatRow> {
    const matchedOnProvision = reason === 'member_found';
    const seat = await this.sql.row<SeatRow>(
      ACTIVATE_INVITED_SEAT,
      [sponsorshipId, userId, crewName, matchedOnProvision],
      tx,
    );
    if (!seat) throw new Error(`seat ${sponsorshipId} was not invited when activated`);
    const actor = matchedOnProvision ? seat.clientId : 'system';
    await this.record(tx, [{ sponsorshipId, from: 'invited', to: 'active', actor, reason }]);
    return seat;
  }

  /**
   * Closes live seats (`seats` locked, as they were), each change recorded with `actor` and
   * `reason`; answers them as closed. Probes are charged in the same statement, whichever way the
   * seat closes: any would otherwise be a free way round the budget.
   */
  async close(
    tx: Transaction,
    seats: readonly Pick<SeatRow, 'sponsorshipId' | 'status'>[],
    to: 'ended' | 'cancelled',
    actor: string,
    reason: string,
  ): Promise<SeatRow[]> {
    if (seats.length === 0) return [];
    const closed = await this.sql.rows<SeatRow>(
      CLOSE_LIVE_SEATS,
      [seats.map((s) => s.sponsorshipId), to, PROBE_WINDOW],
      tx,
    );
    await this.record(
      tx,
      seats.map((s) => ({ sponsorshipId: s.sponsorshipId, from: s.status, to, actor, reason })),
    );
    return closed;
  }

  private async record(tx: Transaction, changes: readonly SeatChange[]): Promise<void> {
    if (changes.length === 0) return;
    await this.sql.rows(
      `INSERT INTO seat_events (sponsorship_id, from_status, to_status, actor, reason)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[])`,
      columns(changes, ['sponsorshipId', 'from', 'to', 'actor', 'reason']),
      tx,
    );
    this.transitions.recorded(tx, changes);
  }

  /** The partner's seat; inside `tx`, locked. */
  async get(clientId: string, sponsorshipId: string, tx?: Transaction): Promise<SeatRow | null> {
    return this.sql.row<SeatRow>(
      `SELECT ${COLUMNS} FROM seats WHERE client_id = $1 AND sponsorship_id = $2${tx ? ' FOR UPDATE' : ''}`,
      [clientId, sponsorshipId],
      tx,
    );
  }

  /** One page, newest first: `(invited_at, sponsorship_id)` descending, after `position`. */
  async page(
    clientId: string,
    status: SeatStatus | undefined,
    position: ListPosition | undefined,
    limit: number,
  ): Promise<SeatRow[]> {
    return this.sql.rows<SeatRow>(
      `SELECT ${COLUMNS} FROM seats
        WHERE client_id = $1
          AND ($2::text IS NULL OR status = $2)
          AND ($3::timestamptz IS NULL OR (invited_at, sponsorship_id) < ($3::timestamptz, $4::text))
        ORDER BY invited_at DESC, sponsorship_id DESC
        LIMIT $5`,
      [clientId, status ?? null, position?.invitedAt ?? null, position?.sponsorshipId ?? null, limit],
    );
  }

  /**
   * Reconcile's diff in one statement: live seats matched by neither e-mail (trimmed, lower-cased)
   * nor external_ref, and the refs (first occurrence, in order) matching no live seat. `= ANY` over
   * a bound array is hashed (a NOT EXISTS under an OR took 20 s for 10,000 × 10,000).
   */
  async diff(
    clientId: string,
    refs: readonly string[],
    normalised: readonly string[],
  ): Promise<ReconcileDiff> {
    const rows = await this.sql.rows<{ kind: string; a: string; b: string | null }>(
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
    return this.sql.rows<SeatRow>(
      `SELECT ${COLUMNS} FROM seats
        WHERE client_id = $1 AND sponsorship_id = ANY($2::text[]) AND ${LIVE}
        ORDER BY sponsorship_id FOR UPDATE`,
      [clientId, ids],
      tx,
    );
  }

  /** The member's open billed (active) seat of this partner, locked; re-checked after a wait. */
  async lockActiveOf(
    tx: Transaction,
    clientId: string,
    by: { readonly userId: string } | { readonly externalRef: string },
  ): Promise<SeatRow | null> {
    const [column, value] = 'userId' in by ? ['user_id', by.userId] : ['external_ref', by.externalRef];
    return this.sql.row<SeatRow>(
      `SELECT ${COLUMNS} FROM seats WHERE client_id = $1 AND ${column} = $2 AND status = 'active'
        ORDER BY invited_at DESC LIMIT 1 FOR UPDATE`,
      [clientId, value],
      tx,
    );
  }

  /** The partner's most recent seat with this external_ref, whatever its status. */
  async latestByRef(tx: Transaction, clientId: string, externalRef: string): Promise<SeatRow | null> {
    return this.sql.row<SeatRow>(
      `SELECT ${COLUMNS} FROM seats WHERE client_id = $1 AND external_ref = $2
        ORDER BY invited_at DESC LIMIT 1`,
      [clientId, externalRef],
      tx,
    );
  }

  /** Every seat that ever gave this member premium, any partner, newest first. */
  async ofMember(userId: string): Promise<MemberSeatRow[]> {
    return this.sql.rows<MemberSeatRow>(
      `SELECT s.client_id AS "clientId", p.name AS "partnerName", s.status, s.activated_at AS "activatedAt",
              coalesce(s.closed_at, s.expires_at) AS until
         FROM seats s LEFT JOIN sponsors p ON p.client_id = s.client_id
        WHERE s.user_id = $1 AND s.activated_at IS NOT NULL
        ORDER BY s.activated_at DESC, s.sponsorship_id DESC
        LIMIT 500`,
      [userId],
    );
  }

  /** Live seats past their term, locked; SKIP LOCKED lets every replica's job take its own share. */
  async lockExpired(tx: Transaction, limit: number): Promise<SeatRow[]> {
    return this.sql.rows<SeatRow>(
      `SELECT ${COLUMNS} FROM seats WHERE ${LIVE} AND expires_at <= now()
        ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED`,
      [limit],
      tx,
    );
  }

  /** The oldest invited seat of this e-mail (any partner), locked. */
  async lockOldestInvited(tx: Transaction, email: string): Promise<SeatRow | null> {
    return this.sql.row<SeatRow>(
      `SELECT ${COLUMNS} FROM seats WHERE email = $1 AND status = 'invited' AND expires_at > now()
        ORDER BY invited_at, sponsorship_id LIMIT 1 FOR UPDATE SKIP LOCKED`,
      [email],
      tx,
    );
  }

  /** Deletes up to `limit` seats closed over `olderThanDays` ago, with their history, skipping locked ones; answers how many. */
  async deleteClosed(olderThanDays: number, limit: number): Promise<number> {
    const row = await this.sql.row<{ deleted: number }>(
      `WITH doomed AS (
         SELECT sponsorship_id FROM seats
          WHERE status IN ('ended', 'cancelled') AND closed_at < clock_timestamp() - make_interval(days => $1)
          ORDER BY closed_at LIMIT $2 FOR UPDATE SKIP LOCKED
       ), history AS (
         DELETE FROM seat_events e USING doomed WHERE e.sponsorship_id = doomed.sponsorship_id
       ), gone AS (
         DELETE FROM seats s USING doomed WHERE s.sponsorship_id = doomed.sponsorship_id RETURNING 1
       )
       SELECT count(*)::int AS deleted FROM gone`,
      [olderThanDays, limit],
    );
    return row?.deleted ?? 0;
  }
}
