import { freshEmail, seatEvents, seatOf, statusOf, type SeatBody } from '../support/sponsorship';
import { createPartner } from '../support/app-factories';
import { type Credentials, useSponsorshipStack } from '../support/starters/sponsorship-api';

/**
 * What the seat expiry job prunes, through the running app against real PostgreSQL: seats closed
 * longer ago than SEAT_RETENTION_DAYS go with their history; seats closed more recently, and live
 * seats however old, stay. Probe charges go once they leave their 24-hour window. Seats and charges
 * belong to partners of this file alone; only their dates are moved in the database.
 */
const SEATS = '/v1/partners/sponsorships';
const RETENTION_DAYS = 400;

describe('seat retention', () => {
  const { api } = useSponsorshipStack({ SEAT_RETENTION_DAYS: String(RETENTION_DAYS) });
  let partner: Credentials;

  beforeAll(async () => {
    partner = await createPartner(api.auth, { sponsorship: true });
  }, 60_000);

  async function provision(): Promise<SeatBody> {
    const res = await api.call('POST', SEATS, partner, { email: freshEmail('retention') });
    expect(statusOf(res)).toMatchObject({ status: 201 });
    return seatOf(res);
  }

  /** A seat the partner provisioned and removed, closed `closedDaysAgo` days ago. */
  async function closedSeat(closedDaysAgo: number): Promise<string> {
    const seat = await provision();
    expect(statusOf(await api.call('DELETE', `${SEATS}/${seat.sponsorship_id}`, partner))).toMatchObject({
      status: 200,
    });
    await api.db.query(
      `UPDATE sponsorship.seats
          SET invited_at = now() - make_interval(days => $2 + 1), closed_at = now() - make_interval(days => $2)
        WHERE sponsorship_id = $1`,
      [seat.sponsorship_id, closedDaysAgo],
    );
    return seat.sponsorship_id;
  }

  const exists = async (id: string) =>
    (await api.db.query('SELECT 1 FROM sponsorship.seats WHERE sponsorship_id = $1', [id])).rowCount === 1;

  it('deletes seats closed past the retention with their history, and keeps recent and live ones', async () => {
    const old = await closedSeat(RETENTION_DAYS + 5);
    const recent = await closedSeat(RETENTION_DAYS - 1);
    const live = await provision();
    await api.db.query(
      `UPDATE sponsorship.seats SET invited_at = now() - make_interval(days => $2) WHERE sponsorship_id = $1`,
      [live.sponsorship_id, RETENTION_DAYS * 2],
    );
    expect(await seatEvents(api.db, old)).toHaveLength(2);

    await api.expireDueSeats();

    expect(await exists(old)).toBe(false);
    expect(await seatEvents(api.db, old)).toEqual([]);
    expect(statusOf(await api.call('GET', `${SEATS}/${old}`, partner))).toMatchObject({ status: 404 });
    expect(await exists(recent)).toBe(true);
    expect(await seatEvents(api.db, recent)).toHaveLength(2);
    expect(seatOf(await api.call('GET', `${SEATS}/${live.sponsorship_id}`, partner)).status).toBe('invited');
  });

  it('deletes probe charges once they leave the 24-hour window', async () => {
    const [oldCharge, youngCharge] = [await closedSeat(1), await closedSeat(0)];
    await api.db.query(
      `INSERT INTO sponsorship.probe_charges (sponsorship_id, client_id, charged_at)
       VALUES ($1, $3, now() - interval '25 hours'), ($2, $3, now() - interval '23 hours')`,
      [oldCharge, youngCharge, partner.client_id],
    );

    await api.expireDueSeats();

    const { rows } = await api.db.query<{ sponsorship_id: string }>(
      'SELECT sponsorship_id FROM sponsorship.probe_charges WHERE client_id = $1',
      [partner.client_id],
    );
    expect(rows.map((r) => r.sponsorship_id)).toEqual([youngCharge]);
  });
});
