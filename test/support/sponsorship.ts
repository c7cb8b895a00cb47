import { randomBytes } from 'node:crypto';
import type { Pool } from 'pg';
import type { CrewApiHarness } from './starters/crew-api';
import type { FactoryMember } from './app-factories';
import type { HttpResponse } from './http';

/**
 * Test data of the sponsorship specs. The sandbox seats are shared by every spec file of a run,
 * so tests that change seats work with partners and e-mails of their own.
 */

function suffix(): string {
  return randomBytes(5).toString('hex');
}

/** A lower-case e-mail nobody else in the run uses. */
export function freshEmail(tag: string): string {
  return `${tag}-${suffix()}@it.test`;
}

export type Member = FactoryMember;

/** A new crew member, registered through crew-api's internal API (free tier). */
export async function registerMember(
  crew: CrewApiHarness,
  email: string,
  name = 'Test Sailor',
): Promise<Member> {
  const request = { email, name, role: 'Deckhand', country: 'NO' };
  const res = await crew.internal('POST', '/internal/v1/crew', request);
  expect({ status: res.status, text: res.text }).toMatchObject({ status: 201 });
  const body = res.json<Member>();
  return { user_id: body.user_id, email: body.email, name: body.name };
}

export interface MembershipRow {
  readonly tier: string;
  readonly source: string;
  readonly sponsor_client_id: string | null;
  readonly sponsorship_id: string | null;
  readonly expires_at: Date | null;
}

export async function membershipOf(db: Pool, userId: string): Promise<MembershipRow> {
  const { rows } = await db.query<MembershipRow>(
    `SELECT tier, source, sponsor_client_id, sponsorship_id, expires_at FROM crew.memberships WHERE user_id = $1`,
    [userId],
  );
  if (!rows[0]) throw new Error(`no membership row for ${userId}`);
  return rows[0];
}

export interface SeatEventRow {
  readonly from_status: string | null;
  readonly to_status: string;
  readonly actor: string;
  readonly reason: string;
}

/** A seat's history, oldest first. */
export async function seatEvents(db: Pool, sponsorshipId: string): Promise<SeatEventRow[]> {
  const { rows } = await db.query<SeatEventRow>(
    `SELECT from_status, to_status, actor, reason FROM sponsorship.seat_events
      WHERE sponsorship_id = $1 ORDER BY id`,
    [sponsorshipId],
  );
  return rows;
}

export async function seatCount(db: Pool, where: string, params: unknown[]): Promise<number> {
  const { rows } = await db.query<{ n: string }>(
    `SELECT count(*) AS n FROM sponsorship.seats WHERE ${where}`,
    params,
  );
  return Number(rows[0].n);
}

export interface SeatBody {
  readonly sponsorship_id: string;
  readonly email: string;
  readonly crew_name: string | null;
  readonly status: string;
  readonly external_ref: string | null;
  readonly invited_at: string | null;
  readonly activated_at: string | null;
  readonly expires_at: string | null;
}

export function seatOf(res: HttpResponse): SeatBody {
  return res.json<SeatBody>();
}

/** Status and a bit of the body, so a failed expectation says what came back. */
export function statusOf(res: HttpResponse): { status: number; body: string } {
  return { status: res.status, body: res.text.slice(0, 300) };
}

/**
 * `count` invited seats of `clientId`, written straight into the table in one statement (fast
 * set-up for lists and reconcile): seat i (1-based) is `sps_<tag>_<i, 6 digits>`, e-mail
 * `<tag>-<i>@it.test`, external_ref `<tag>-ref-<i>`, and every three consecutive seats share one
 * invited_at (ties the list must break by sponsorship_id), older as i grows.
 */
export async function insertInvitedSeats(
  db: Pool,
  clientId: string,
  tag: string,
  count: number,
): Promise<void> {
  await db.query(
    `WITH base AS (SELECT clock_timestamp() - interval '1 hour' AS t)
     INSERT INTO sponsorship.seats (sponsorship_id, client_id, email, external_ref, status, invited_at,
                                    expires_at, updated_at)
     SELECT 'sps_' || $2 || '_' || lpad(i::text, 6, '0'), $1, $2 || '-' || i || '@it.test',
            $2 || '-ref-' || i, 'invited', base.t - ((i - 1) / 3) * interval '1 second',
            now() + interval '1 year', now()
       FROM base, generate_series(1, $3::int) AS i`,
    [clientId, tag, count],
  );
}

export function seatIdOf(tag: string, i: number): string {
  return `sps_${tag}_${String(i).padStart(6, '0')}`;
}

export function fresh(tag: string): string {
  return `${tag}${suffix()}`;
}
