import { randomBytes } from 'node:crypto';
import type { PartnerPrincipal } from '@svc/security';
import { PartnerWebhooksException } from '../../apps/webhook-dispatcher/src/partner-webhooks/partner-webhooks.exception';
import { PartnerWebhooksService } from '../../apps/webhook-dispatcher/src/partner-webhooks/partner-webhooks.service';
import { useDeliveryStack } from '../support/starters/webhook-dispatcher';

/**
 * A partner's delivery log at a realistic size, against the real database: keyset pages, filters
 * and replays see exactly the caller's deliveries, whatever else the shared database holds.
 */
const { dispatcher } = useDeliveryStack({ WEBHOOK_REPLAYS_PER_HOUR: '2' });

const asPartner = (clientId: string) =>
  ({ client_id: clientId, suspended: false, sponsorship: false }) as unknown as PartnerPrincipal;

/**
 * `count` deliveries of `clientId`, one every `stepMs` back from `newest` (pairs share a created_at,
 * so the delivery id breaks ties); every fifth is skipped, every seventh given up.
 */
async function seedLog(clientId: string, count: number, newest: Date, stepMs: number): Promise<void> {
  await dispatcher.db.query(
    `INSERT INTO webhooks.deliveries
       (delivery_id, event_id, event_type, user_id, client_id, target_url, body, status, attempts, created_at)
     SELECT 'dlv_' || $1 || '_' || lpad(g::text, 6, '0'), 'evt_' || $1 || '_' || g, 'user.profile.updated',
            'usr_volume', $1, 'https://partner.example/hook', '{}',
            CASE WHEN g % 5 = 0 THEN 'skipped' WHEN g % 7 = 0 THEN 'failed' ELSE 'delivered' END,
            CASE WHEN g % 5 = 0 THEN 0 ELSE 1 END,
            $2::timestamptz - ((g / 2) * $3::int) * interval '1 millisecond'
       FROM generate_series(1, $4::int) AS g`,
    [clientId, newest.toISOString(), stepMs, count],
  );
}

async function idsInOrder(clientId: string, where = 'true', values: unknown[] = []): Promise<string[]> {
  const { rows } = await dispatcher.db.query<{ delivery_id: string }>(
    `SELECT delivery_id FROM webhooks.deliveries d WHERE client_id = $1 AND ${where}
      ORDER BY created_at DESC, delivery_id DESC`,
    [clientId, ...values],
  );
  return rows.map((r) => r.delivery_id);
}

describe('a partner’s delivery log (realistic volume)', () => {
  const service = () => dispatcher.app.get(PartnerWebhooksService);
  const newest = new Date(Date.now() - 60_000);

  it('pages through 3,000 deliveries newest first, each exactly once, and never another partner’s', async () => {
    const mine = `vol-${randomBytes(4).toString('hex')}`;
    const theirs = `vol-${randomBytes(4).toString('hex')}`;
    await seedLog(mine, 3000, newest, 1000);
    await seedLog(theirs, 500, newest, 1000);

    const seen: string[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 100; pages += 1) {
      const page = await service().list(asPartner(mine), { limit: 200, cursor });
      seen.push(...page.items.map((d) => d.delivery_id));
      if (!page.next_cursor) break;
      cursor = page.next_cursor;
    }
    expect(seen).toEqual(await idsInOrder(mine));
    expect(seen).toHaveLength(3000);
  });

  it('filters by status and by the creation window, across pages', async () => {
    const mine = `vol-${randomBytes(4).toString('hex')}`;
    await seedLog(mine, 1000, newest, 1000);
    const since = new Date(newest.getTime() - 300_000);
    const until = new Date(newest.getTime() - 60_000);
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 20; pages += 1) {
      const page = await service().list(asPartner(mine), {
        status: 'skipped',
        since,
        until,
        limit: 7,
        cursor,
      });
      expect(page.items.every((d) => d.status === 'skipped')).toBe(true);
      seen.push(...page.items.map((d) => d.delivery_id));
      if (!page.next_cursor) break;
      cursor = page.next_cursor;
    }
    const expected = await idsInOrder(mine, `status = 'skipped' AND created_at >= $2 AND created_at < $3`, [
      since,
      until,
    ]);
    expect(expected.length).toBeGreaterThan(7);
    expect(seen).toEqual(expected);
  });

  it('replays the window’s given-up deliveries as new deliveries of the same events, within the hourly budget', async () => {
    const mine = `vol-${randomBytes(4).toString('hex')}`;
    await seedLog(mine, 300, newest, 1000);
    const since = new Date(newest.getTime() - 200_000);
    const until = new Date(newest.getTime() + 1);
    const sources = await idsInOrder(mine, `status = 'failed' AND created_at >= $2 AND created_at < $3`, [
      since,
      until,
    ]);

    const replayed = await service().replay(asPartner(mine), { since, until, status: 'given_up' });
    expect(replayed.replayed_count).toBe(sources.length);
    const { rows } = await dispatcher.db.query<{
      redelivery_of: string;
      event_id: string;
      src_event: string;
    }>(
      `SELECT r.redelivery_of, r.event_id, s.event_id AS src_event
         FROM webhooks.deliveries r JOIN webhooks.deliveries s ON s.delivery_id = r.redelivery_of
        WHERE r.client_id = $1`,
      [mine],
    );
    expect(rows.map((r) => r.redelivery_of).sort()).toEqual([...sources].sort());
    expect(rows.every((r) => r.event_id === r.src_event)).toBe(true);

    await service().replay(asPartner(mine), { since, until, status: 'skipped' });
    const refused = await service()
      .replay(asPartner(mine), { since, until, status: 'skipped' })
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(refused).toBeInstanceOf(PartnerWebhooksException);
    expect(refused).toMatchObject({ code: 'replay_budget_exceeded' });
    expect((refused as PartnerWebhooksException).retryAfterSeconds).toBeGreaterThan(0);
  });
});
