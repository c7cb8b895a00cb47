import { SANDBOX_MEMBERS, SANDBOX_WEBHOOK_SECRET } from '@svc/contracts';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { partner } from '../support/factories';
import { eventually } from '../support/services';
import { startAuthServer, type AuthServerHarness } from '../support/starters/auth-server';
import { startCrewApi, type CrewApiHarness } from '../support/starters/crew-api';
import { expectProblem } from '../support/http';
import { accessToken } from '../support/oauth/flow';
import type { AppProcess } from '../support/starters/app-process';
import { spawnDispatcher } from '../support/starters/webhook-dispatcher';
import { WebhookReceiver } from '../support/webhook-receiver';

/**
 * GET /v1/webhooks/test (docs/rules.md, Crew data endpoints; docs/rules.md): a partner proves
 * reachability, signature verification and the response budget; the delivery it receives carries
 * the event and delivery ids the endpoint answered with.
 */
jest.setTimeout(40_000);

const stripe = new Stripe('sk_test_not_used');
const [alex] = SANDBOX_MEMBERS;
let auth: AuthServerHarness;
let crew: CrewApiHarness;
let dispatcher: AppProcess;
let receiver: WebhookReceiver;
let hook: string;

beforeAll(async () => {
  auth = await startAuthServer();
  crew = await startCrewApi(auth);
  // The dispatcher in a process of its own: passport keeps one strategy of each name per process
  // (the last app's), and this file's bearer requests are crew-api's.
  dispatcher = await spawnDispatcher(auth, 'webhook-test-endpoint', {
    WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s,1s,1s',
    WEBHOOK_TIMEOUT_MS: '2000',
  });
  receiver = await WebhookReceiver.start();
  hook = receiver.endpoint('/sandbox-partner');
  // The seeded sandbox partner, pointed at this test's receiver (the next seed restores it).
  await crew.db.query(`UPDATE auth.partners SET webhook_url = $1 WHERE client_id = 'sandbox-partner'`, [
    hook,
  ]);
}, 60_000);

afterAll(async () => {
  await receiver?.close();
  await dispatcher?.stop();
  await crew?.close();
  await auth?.close();
});

describe('GET /v1/webhooks/test', () => {
  it('enqueues webhook.test for the calling partner and answers with the ids the delivery then carries', async () => {
    const token = await accessToken(auth, alex, { scope: 'seatime:read' });
    const res = await crew.get('/v1/webhooks/test', token);
    expect(res.status).toBe(200);
    expect(res.header('x-ratelimit-remaining')).toMatch(/^\d+$/);
    const body = res.json<{ event_id: string; delivery_id: string; target_url: string }>();
    expect(Object.keys(body).sort()).toEqual(['delivery_id', 'event_id', 'target_url']);
    expect(body.event_id).toMatch(/^evt_[A-Za-z0-9_-]+$/);
    expect(body.delivery_id).toMatch(/^dlv_[A-Za-z0-9_-]+$/);
    expect(body.target_url).toBe(hook);

    // Other events about alex (earlier record changes) may reach the same URL; ordering is not
    // guaranteed, so find the one announced.
    const delivered = await eventually(
      async () =>
        receiver.requests('/sandbox-partner').find((r) => r.headers['x-svc-event-id'] === body.event_id),
      20_000,
    );
    expect(delivered.headers['x-svc-delivery-id']).toBe(body.delivery_id);
    expect(delivered.headers['x-svc-event-id']).toBe(body.event_id);
    expect(delivered.headers['x-svc-event-type']).toBe('webhook.test');
    const raw = delivered.rawBody.toString();
    expect(JSON.parse(raw)).toEqual({
      created_at: expect.any(String),
      id: body.event_id,
      type: 'webhook.test',
      user_id: alex.user_id,
    });
    const verified = stripe.webhooks.constructEvent(
      raw,
      String(delivered.headers['x-svc-signature']),
      SANDBOX_WEBHOOK_SECRET,
    );
    expect(verified.id).toBe(body.event_id);
    // And with Standard Webhooks' reference verifier, the secret as issued.
    expect(delivered.headers['webhook-id']).toBe(body.event_id);
    const standard = new Webhook(SANDBOX_WEBHOOK_SECRET, { format: 'raw' }).verify(raw, {
      'webhook-id': String(delivered.headers['webhook-id']),
      'webhook-timestamp': String(delivered.headers['webhook-timestamp']),
      'webhook-signature': String(delivered.headers['webhook-signature']),
    }) as { id: string };
    expect(standard.id).toBe(body.event_id);
  });

  it('answers 409 webhook_not_registered to a partner without a webhook URL', async () => {
    const token = await accessToken(auth, alex, { partner: partner('sandbox-partner-b') });
    const res = await crew.get('/v1/webhooks/test', token);
    expectProblem(res, 409, 'webhook_not_registered');
    expect(res.header('x-ratelimit-limit')).toMatch(/^\d+$/);
  });

  it('needs a valid access token (401 with a Bearer challenge)', async () => {
    const res = await crew.get('/v1/webhooks/test', undefined);
    expect(res.status).toBe(401);
    expect(res.header('www-authenticate')).toBe('Bearer');
  });
});
