import { PartnerWebhooksService } from '../../apps/webhook-dispatcher/src/partner-webhooks/partner-webhooks.service';
import { eventually } from '../support/services';
import { asPartner, finishedDeliveries, TestEndpoint } from '../support/webhook-receiver';
import { newEvent, useDeliveryStack } from '../support/starters/webhook-dispatcher';
import { createPartner, grantConsent, createUser } from '../support/app-factories';

// Fair delivery: a partner whose endpoint hangs until the attempt budget runs out, while it
// replays hundreds of deliveries, holds at most WEBHOOK_PARTNER_CONCURRENCY attempts at once, and
// another partner receiving the same events meanwhile is not slowed. A tight setup: 16 permits in
// all, 4 per partner, a 2 s budget, and the events arriving faster (20/s) than 16 permits could
// serve if each waited for the hanging endpoint (8/s).
jest.setTimeout(90_000);

const PER_PARTNER = 4;
const { auth, dispatcher } = useDeliveryStack(
  {
    WEBHOOK_CONCURRENCY: '16',
    WEBHOOK_PARTNER_CONCURRENCY: String(PER_PARTNER),
    WEBHOOK_TIMEOUT_MS: '2000',
    WEBHOOK_RETRY_SCHEDULE: '1h',
    WEBHOOK_REPLAYS_PER_HOUR: '100',
  },
  { ownVhost: 'noisy-neighbour' },
);

/** An endpoint that answers 204 at once; notes when each event arrived after it was created. */
function quickEndpoint() {
  const latencies = new Map<string, number>();
  const endpoint = new TestEndpoint((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string; created_at: string };
      if (!latencies.has(body.id)) latencies.set(body.id, Date.now() - Date.parse(body.created_at));
      res.writeHead(204).end();
    });
  });
  return Object.assign(endpoint, { latencies });
}

describe('noisy neighbour: a hanging partner replaying at its budget cannot slow another partner', () => {
  it(`holds at most ${PER_PARTNER} of the hanging partner's attempts, and the other partner's events arrive within 1.5 s`, async () => {
    const noisyEndpoint = new TestEndpoint();
    const victimEndpoint = quickEndpoint();
    try {
      const userId = (await createUser(auth)).user_id;
      const noisy = await createPartner(auth, { webhookUrl: await noisyEndpoint.start() });
      const victim = await createPartner(auth, { webhookUrl: await victimEndpoint.start() });
      await grantConsent(auth, userId, noisy.client_id, ['profile:read']);
      await grantConsent(auth, userId, victim.client_id, ['profile:read']);

      // 300 given-up deliveries of the noisy partner, replayed: 300 attempts of 2 s each queued.
      await finishedDeliveries(dispatcher.db, { clientId: noisy.client_id, userId }, 300, {
        minutesAgo: 1,
        attempts: 6,
      });
      const replayed = await dispatcher.app.get(PartnerWebhooksService).replay(asPartner(noisy.client_id), {
        since: new Date(Date.now() - 3_600_000),
        until: new Date(),
        status: 'given_up',
      });
      expect(replayed.replayed_count).toBe(300);
      await eventually(async () => (noisyEndpoint.open >= PER_PARTNER ? true : undefined));

      // 60 events at 20/s, each for both partners.
      const events: ReturnType<typeof newEvent>[] = [];
      for (let i = 0; i < 60; i += 1) {
        const event = newEvent('user.profile.updated', userId);
        events.push(event);
        await dispatcher.publish(event);
        await new Promise((r) => setTimeout(r, 50));
      }
      await eventually(
        async () => (events.every((e) => victimEndpoint.latencies.has(e.id)) ? true : undefined),
        30_000,
      );
      const latencies = events
        .map((e) => victimEndpoint.latencies.get(e.id) ?? Infinity)
        .sort((a, b) => a - b);
      expect(latencies[29]).toBeLessThan(300);
      expect(latencies[59]).toBeLessThan(1500);
      // The hanging endpoint never held more than its slots, replays and new events together.
      expect(noisyEndpoint.maxOpen).toBeLessThanOrEqual(PER_PARTNER);
      expect(noisyEndpoint.requests).toBeGreaterThan(PER_PARTNER);
      // Its first attempts of the new events waited in the backlog: recorded, not lost.
      const { rows } = await dispatcher.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM webhooks.deliveries WHERE client_id = $1 AND event_id = ANY($2)`,
        [noisy.client_id, events.map((e) => e.id)],
      );
      expect(rows[0].n).toBe(60);
    } finally {
      await noisyEndpoint.close();
      await victimEndpoint.close();
    }
  });
});
