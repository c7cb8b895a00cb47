import { expectInvalidFields } from '../support/http';
import {
  fresh,
  freshEmail,
  insertInvitedSeats,
  seatIdOf,
  statusOf,
  type SeatBody,
} from '../support/sponsorship';
import { createPartner } from '../support/app-factories';
import { PARTNER_B, type Credentials, useSponsorshipStack } from '../support/starters/sponsorship-api';

const SEATS = '/v1/partners/sponsorships';

interface Page {
  readonly items: SeatBody[];
  readonly next_cursor: string | null;
}

describe('GET /v1/partners/sponsorships', () => {
  const { api } = useSponsorshipStack();
  /** 60 invited seats inserted as a block (every three share one invited_at), plus closed ones. */
  let partner: Credentials;
  let tag: string;

  beforeAll(async () => {
    partner = await createPartner(api.auth, { sponsorship: true });
    tag = fresh('l');
    await insertInvitedSeats(api.db, partner.client_id, tag, 60);
    // Seats 1, 5, 9, … cancelled, 4, 8, … ended: the status filter's material.
    await api.db.query(
      `UPDATE sponsorship.seats
          SET status = CASE WHEN right(sponsorship_id, 6)::int % 4 = 1 THEN 'cancelled' ELSE 'ended' END,
              closed_at = now()
        WHERE client_id = $1 AND right(sponsorship_id, 6)::int % 4 IN (0, 1)`,
      [partner.client_id],
    );
    // Seats 2, 6 and 10 active (a crew member each; the list needs no membership behind them).
    await api.db.query(
      `UPDATE sponsorship.seats
          SET status = 'active', user_id = 'usr_' || sponsorship_id, crew_name = 'Crew ' || sponsorship_id,
              activated_at = now()
        WHERE client_id = $1 AND right(sponsorship_id, 6)::int IN (2, 6, 10)`,
      [partner.client_id],
    );
  }, 60_000);

  async function page(who: Credentials, query: string): Promise<Page> {
    const res = await api.call('GET', `${SEATS}${query}`, who);
    expect(statusOf(res)).toMatchObject({ status: 200 });
    return res.json<Page>();
  }

  /** Every page of a list, following next_cursor; `between` runs after each page. */
  async function walk(who: Credentials, params: string, between?: () => Promise<void>): Promise<SeatBody[]> {
    const all: SeatBody[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 100; i += 1) {
      const q = [params, cursor === null ? '' : `cursor=${encodeURIComponent(cursor)}`]
        .filter(Boolean)
        .join('&');
      const p = await page(who, q ? `?${q}` : '');
      all.push(...p.items);
      cursor = p.next_cursor;
      if (cursor === null) return all;
      await between?.();
    }
    throw new Error('the list did not end');
  }

  /** The partner's seats as the list must order them: invited_at desc, then sponsorship_id desc. */
  async function expectedOrder(clientId: string, status?: string): Promise<string[]> {
    const { rows } = await api.db.query<{ sponsorship_id: string }>(
      `SELECT sponsorship_id FROM sponsorship.seats
        WHERE client_id = $1 AND ($2::text IS NULL OR status = $2)
        ORDER BY invited_at DESC, sponsorship_id COLLATE "C" DESC`,
      [clientId, status ?? null],
    );
    return rows.map((r) => r.sponsorship_id);
  }

  it('answers 50 seats by default, newest first (ties by sponsorship_id descending), with a next_cursor', async () => {
    const first = await page(partner, '');
    expect(first.items).toHaveLength(50);
    expect(first.next_cursor).toEqual(expect.any(String));
    const order = await expectedOrder(partner.client_id);
    expect(first.items.map((s) => s.sponsorship_id)).toEqual(order.slice(0, 50));
    // The block: seat 1 is the newest; of the three sharing an instant, the highest id comes first.
    expect(first.items.slice(0, 3).map((s) => s.sponsorship_id)).toEqual([
      seatIdOf(tag, 3),
      seatIdOf(tag, 2),
      seatIdOf(tag, 1),
    ]);
  });

  it('walks every seat exactly once with any page size, the last page with next_cursor null', async () => {
    const order = await expectedOrder(partner.client_id);
    for (const limit of [1, 7, 200]) {
      const all = await walk(partner, `limit=${limit}`);
      expect(all.map((s) => s.sponsorship_id)).toEqual(order);
    }
  });

  it.each(['invited', 'cancelled', 'ended', 'active'])(
    'filters to one status (%s) across pages',
    async (status) => {
      const all = await walk(partner, `status=${status}&limit=4`);
      expect(all.every((s) => s.status === status)).toBe(true);
      expect(all.map((s) => s.sponsorship_id)).toEqual(await expectedOrder(partner.client_id, status));
    },
  );

  it('counts the filtered statuses right (27 invited, 3 active, 15 cancelled, 15 ended)', async () => {
    expect((await walk(partner, 'status=invited&limit=200')).length).toBe(27);
    // No member behind these seats has connected the partner, so none is named.
    expect(
      (await walk(partner, 'status=active&limit=200')).map((s) => [s.sponsorship_id, s.crew_name]),
    ).toEqual([2, 6, 10].map((i) => [seatIdOf(tag, i), null]));
    expect((await walk(partner, 'status=cancelled&limit=200')).length).toBe(15);
    expect((await walk(partner, 'status=ended&limit=200')).length).toBe(15);
  });

  it("shows only the caller's own seats", async () => {
    const b = await walk(PARTNER_B, 'limit=200');
    expect(b.length).toBeGreaterThanOrEqual(2);
    expect(b.some((s) => s.sponsorship_id.startsWith(`sps_${tag}_`))).toBe(false);
    const { rows } = await api.db.query<{ n: string }>(
      `SELECT count(*) AS n FROM sponsorship.seats WHERE client_id <> $1 AND sponsorship_id = ANY($2::text[])`,
      [PARTNER_B.client_id, b.map((s) => s.sponsorship_id)],
    );
    expect(Number(rows[0].n)).toBe(0);
    const empty = await createPartner(api.auth, { sponsorship: true });
    expect(await page(empty, '')).toEqual({ items: [], next_cursor: null });
  });

  it('gives no duplicates and no gaps while seats are being provisioned during the scan; new seats appear at the top', async () => {
    const busy = await createPartner(api.auth, { sponsorship: true });
    const busyTag = fresh('b');
    await insertInvitedSeats(api.db, busy.client_id, busyTag, 25);
    const before = await expectedOrder(busy.client_id);
    const added: string[] = [];
    const seen = await walk(busy, 'limit=10', async () => {
      for (let i = 0; i < 3; i += 1) {
        const res = await api.call('POST', SEATS, busy, { email: freshEmail('during') });
        expect(res.status).toBe(201);
        added.push(res.json<SeatBody>().sponsorship_id);
      }
    });
    expect(seen.map((s) => s.sponsorship_id)).toEqual(before);
    expect(added).toHaveLength(6);
    const top = await page(busy, '?limit=6');
    expect(top.items.map((s) => s.sponsorship_id).sort()).toEqual([...added].sort());
    expect(top.items.map((s) => s.sponsorship_id)).toEqual([...added].reverse());
  });

  it.each([['0'], ['201'], ['abc'], ['-1'], ['1.5'], ['']])(
    'answers limit=%s with 422 naming limit',
    async (limit) => {
      expectInvalidFields(await api.call('GET', `${SEATS}?limit=${limit}`, partner), ['limit']);
    },
  );

  it('answers an unknown status with 422 naming status', async () => {
    expectInvalidFields(await api.call('GET', `${SEATS}?status=billed`, partner), ['status']);
  });

  it('answers a tampered or made-up cursor with 422 naming cursor', async () => {
    const first = await page(partner, '?limit=5');
    const cursor = first.next_cursor as string;
    const decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Record<string, unknown>;
    const tampered = [
      `${cursor.slice(0, -2)}!!`,
      Buffer.from('{"t":"yesterday","id":"sps_x","s":null}').toString('base64url'),
      Buffer.from(JSON.stringify({ ...decoded, s: 'billed' })).toString('base64url'),
      Buffer.from(JSON.stringify({ ...decoded, id: "x' OR 1=1 --" })).toString('base64url'),
      'not a cursor',
      'x'.repeat(401),
    ];
    for (const c of tampered) {
      expectInvalidFields(await api.call('GET', `${SEATS}?cursor=${encodeURIComponent(c)}`, partner), [
        'cursor',
      ]);
    }
  });

  it('answers a cursor used with another status filter with 422 naming cursor', async () => {
    const invited = await page(partner, '?status=invited&limit=2');
    const c = encodeURIComponent(invited.next_cursor as string);
    expectInvalidFields(await api.call('GET', `${SEATS}?cursor=${c}`, partner), ['cursor']);
    expectInvalidFields(await api.call('GET', `${SEATS}?status=ended&cursor=${c}`, partner), ['cursor']);
    const plain = await page(partner, '?limit=2');
    const p = encodeURIComponent(plain.next_cursor as string);
    expectInvalidFields(await api.call('GET', `${SEATS}?status=invited&cursor=${p}`, partner), ['cursor']);
    // The same filter goes on.
    const next = await page(partner, `?status=invited&limit=2&cursor=${c}`);
    expect(next.items.every((s) => s.status === 'invited')).toBe(true);
  });

  it("never shows another partner's seats through a cursor of its own", async () => {
    const mine = await page(partner, '?limit=1');
    const c = encodeURIComponent(mine.next_cursor as string);
    const theirs = await page(PARTNER_B, `?cursor=${c}&limit=200`);
    expect(theirs.items.some((s) => s.sponsorship_id.startsWith(`sps_${tag}_`))).toBe(false);
  });
});
