import { createHmac, timingSafeEqual } from 'node:crypto';
import { AUTH_CONSENTS_REVOKE } from '@svc/contracts';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { eventually } from '../support/services';
import { attemptsOf, deliveriesOf, newEvent, useDeliveryStack } from '../support/starters/webhook-dispatcher';
import { createPartner, grantConsent, createUser } from '../support/app-factories';
import type { ReceivedWebhook } from '../support/webhook-receiver';
import { sample, scrape } from '../support/metrics';

// docs/rules.md (Webhooks). One dispatcher for the whole file, with a schedule in seconds and a
// short attempt budget, so retries and timeouts are observable within the test's time. It runs on
// a vhost of its own: its metrics must count this file's attempts alone.
jest.setTimeout(40_000);

const stripe = new Stripe('sk_test_not_used');

const { auth, dispatcher, receiver } = useDeliveryStack(
  { WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s,1s,1s', WEBHOOK_TIMEOUT_MS: '1000' },
  { ownVhost: 'delivery' },
);

function header(request: ReceivedWebhook, name: string): string {
  const value = request.headers[name];
  if (typeof value !== 'string') throw new Error(`no ${name} header`);
  return value;
}

/** The v1 signatures of X-SVC-Signature, checked by plain HMAC-SHA256 of "<ts>.<raw body>". */
function hmacValid(request: ReceivedWebhook, secret: string): boolean {
  const parts = header(request, 'x-svc-signature').split(',');
  const t = parts.find((p) => p.startsWith('t='))?.slice(2);
  const expected = createHmac('sha256', secret)
    .update(Buffer.concat([Buffer.from(`${t}.`), request.rawBody]))
    .digest();
  return parts
    .filter((p) => p.startsWith('v1='))
    .some((p) => {
      const given = Buffer.from(p.slice(3), 'hex');
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
}

function stripeVerifies(request: ReceivedWebhook, secret: string): { id: string; type: string } {
  return stripe.webhooks.constructEvent(
    request.rawBody,
    header(request, 'x-svc-signature'),
    secret,
  ) as unknown as { id: string; type: string };
}

/** Standard Webhooks' reference verifier, given the secret as the partner was issued it. */
function standardVerifies(request: ReceivedWebhook, secret: string): { id: string; type: string } {
  const headers = {
    'webhook-id': header(request, 'webhook-id'),
    'webhook-timestamp': header(request, 'webhook-timestamp'),
    'webhook-signature': header(request, 'webhook-signature'),
  };
  return new Webhook(secret, { format: 'raw' }).verify(request.rawBody.toString('utf8'), headers) as {
    id: string;
    type: string;
  };
}

describe('webhook deliveries (docs/rules.md, Webhooks)', () => {
  it('delivers the canonical body, signed, to each consenting partner with the scope, and to no other', async () => {
    const userId = (await createUser(auth)).user_id;
    const pathA = '/fanout-a';
    const a = await createPartner(auth, { webhookUrl: receiver.endpoint(pathA) });
    const pathB = '/fanout-b';
    const b = await createPartner(auth, { webhookUrl: receiver.endpoint(pathB) });
    const pathC = '/fanout-suspended';
    const c = await createPartner(auth, { webhookUrl: receiver.endpoint(pathC), suspended: true });
    await grantConsent(auth, userId, a.client_id, ['profile:read', 'seatime:read']);
    await grantConsent(auth, userId, b.client_id, ['vessels:read']);
    await grantConsent(auth, userId, c.client_id, ['profile:read']);

    const event = newEvent('user.profile.updated', userId);
    await dispatcher.publish(event);

    const [request] = await eventually(async () => {
      const got = receiver.requests(pathA);
      return got.length > 0 ? got : undefined;
    });
    expect(request.rawBody.toString('utf8')).toBe(
      `{"created_at":"${event.created_at}","id":"${event.id}","type":"user.profile.updated","user_id":"${userId}"}`,
    );
    expect(header(request, 'content-type')).toBe('application/json');
    expect(header(request, 'x-svc-event-id')).toBe(event.id);
    expect(header(request, 'x-svc-event-type')).toBe('user.profile.updated');
    expect(header(request, 'x-svc-signature')).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(header(request, 'x-svc-signature')).toContain(`t=${header(request, 'x-svc-timestamp')},`);
    expect(hmacValid(request, a.webhookSecrets[0])).toBe(true);
    expect(hmacValid(request, 'whsec_wrong')).toBe(false);
    expect(stripeVerifies(request, a.webhookSecrets[0])).toMatchObject({ id: event.id, type: event.type });
    expect(() => stripeVerifies(request, 'whsec_wrong')).toThrow();
    expect(header(request, 'webhook-id')).toBe(event.id);
    expect(header(request, 'webhook-timestamp')).toBe(header(request, 'x-svc-timestamp'));
    expect(header(request, 'webhook-signature')).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(standardVerifies(request, a.webhookSecrets[0])).toMatchObject({ id: event.id, type: event.type });
    expect(() => standardVerifies(request, 'whsec_wrong')).toThrow();

    const rows = await eventually(async () => {
      const r = await deliveriesOf(dispatcher.db, event.id);
      return r[0]?.status === 'delivered' ? r : undefined;
    });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ client_id: a.client_id, attempts: 1, body: request.rawBody.toString() });
    expect(header(request, 'x-svc-delivery-id')).toBe(rows[0].delivery_id);

    // The same event again (the outbox relay publishes at least once): no new delivery.
    await dispatcher.publish(event);
    await new Promise((r) => setTimeout(r, 1500));
    expect(await deliveriesOf(dispatcher.db, event.id)).toHaveLength(1);
    expect(receiver.requests(pathA)).toHaveLength(1);
    expect(receiver.requests(pathB)).toHaveLength(0);
    expect(receiver.requests(pathC)).toHaveLength(0);
  });

  it('retries a failing receiver on the schedule: fails twice, then 3 attempts with the same event, each freshly signed', async () => {
    const userId = (await createUser(auth)).user_id;
    const path = '/flaky';
    const p = await createPartner(auth, {
      webhookUrl: receiver.endpoint(path, (n) => (n <= 2 ? 503 : 200)),
    });
    await grantConsent(auth, userId, p.client_id, ['seatime:read']);
    const event = newEvent('user.sea_time.updated', userId);
    await dispatcher.publish(event);

    const [delivery] = await eventually(async () => {
      const r = await deliveriesOf(dispatcher.db, event.id);
      return r[0]?.status === 'delivered' ? r : undefined;
    }, 20_000);
    const requests = receiver.requests(path);
    expect(requests).toHaveLength(3);
    expect(new Set(requests.map((r) => header(r, 'x-svc-event-id')))).toEqual(new Set([event.id]));
    expect(new Set(requests.map((r) => r.rawBody.toString()))).toEqual(new Set([delivery.body]));
    const stamps = requests.map((r) => Number(header(r, 'x-svc-timestamp')));
    expect(stamps[1]).toBeGreaterThan(stamps[0]);
    expect(stamps[2]).toBeGreaterThan(stamps[1]);
    for (const r of requests) {
      expect(hmacValid(r, p.webhookSecrets[0])).toBe(true);
      expect(stripeVerifies(r, p.webhookSecrets[0]).id).toBe(event.id);
      expect(standardVerifies(r, p.webhookSecrets[0]).id).toBe(event.id);
    }
    const attempts = await attemptsOf(dispatcher.db, delivery.delivery_id);
    expect(attempts.map((a) => [a.attempt, a.status_code])).toEqual([
      [1, 503],
      [2, 503],
      [3, 200],
    ]);
    expect(attempts[0].next_attempt_at).not.toBeNull();
    expect(attempts[2].next_attempt_at).toBeNull();
  });

  it('gives up after 6 attempts and marks the delivery failed', async () => {
    const userId = (await createUser(auth)).user_id;
    const path = '/always-500';
    const p = await createPartner(auth, { webhookUrl: receiver.endpoint(path, () => 500) });
    await grantConsent(auth, userId, p.client_id, ['vessels:read']);
    const event = newEvent('user.vessels.updated', userId);
    const metricsBefore = await scrape(dispatcher.app);
    const attemptsBefore = (outcome: string) =>
      sample(metricsBefore, 'webhook_attempts_total', { app: 'webhook-dispatcher', outcome });
    const timedBefore = (outcome: string) =>
      sample(metricsBefore, 'webhook_attempt_duration_seconds_count', { app: 'webhook-dispatcher', outcome });
    // Every outcome's series exists before it first happens.
    for (const outcome of ['delivered', 'retry', 'given_up']) {
      expect(attemptsBefore(outcome)).toEqual(expect.any(Number));
      expect(timedBefore(outcome)).toEqual(expect.any(Number));
    }
    const retryQueue = { app: 'webhook-dispatcher', queue: 'webhooks.retry.1000' };
    expect(sample(metricsBefore, 'webhook_retry_queue_messages', retryQueue)).toBeGreaterThanOrEqual(0);
    for (const queue of ['webhooks.events.parked', 'webhooks.deliveries.parked'])
      expect(sample(metricsBefore, 'webhook_retry_queue_messages', { queue })).toBeGreaterThanOrEqual(0);
    await dispatcher.publish(event);
    // While it waits out a retry delay, the attempt's message sits in the retry queue.
    await eventually(
      async () => {
        const waiting = sample(await scrape(dispatcher.app), 'webhook_retry_queue_messages', retryQueue);
        return waiting !== undefined && waiting >= 1 ? true : undefined;
      },
      10_000,
      50,
    );

    const [delivery] = await eventually(async () => {
      const r = await deliveriesOf(dispatcher.db, event.id);
      return r[0]?.status === 'failed' ? r : undefined;
    }, 25_000);
    expect(delivery.attempts).toBe(6);
    const attempts = await attemptsOf(dispatcher.db, delivery.delivery_id);
    expect(attempts.map((a) => a.status_code)).toEqual([500, 500, 500, 500, 500, 500]);
    expect(attempts.slice(0, 5).every((a) => a.next_attempt_at !== null)).toBe(true);
    expect(attempts[5].next_attempt_at).toBeNull();
    // No seventh attempt is ever made.
    await new Promise((r) => setTimeout(r, 1500));
    expect(receiver.requests(path)).toHaveLength(6);
    // Five failed attempts queued a retry, the sixth gave up; each POST was timed.
    const metricsAfter = await scrape(dispatcher.app);
    const attemptsNow = (outcome: string) => sample(metricsAfter, 'webhook_attempts_total', { outcome });
    const timed = (outcome: string) =>
      sample(metricsAfter, 'webhook_attempt_duration_seconds_count', { outcome });
    expect(attemptsNow('retry')).toBe(attemptsBefore('retry')! + 5);
    expect(attemptsNow('given_up')).toBe(attemptsBefore('given_up')! + 1);
    expect(attemptsNow('delivered')).toBe(attemptsBefore('delivered'));
    expect(timed('retry')).toBe(timedBefore('retry')! + 5);
    expect(timed('given_up')).toBe(timedBefore('given_up')! + 1);
    expect(metricsAfter).not.toContain('outcome="failed"');
  });

  it('counts a receiver that never answers as a failed attempt (the budget covers the whole exchange)', async () => {
    const userId = (await createUser(auth)).user_id;
    const path = '/hangs-once';
    const p = await createPartner(auth, {
      webhookUrl: receiver.endpoint(path, (n) => (n === 1 ? 'hang' : 204)),
    });
    await grantConsent(auth, userId, p.client_id, ['profile:read']);
    const event = newEvent('user.profile.updated', userId);
    await dispatcher.publish(event);

    const [delivery] = await eventually(async () => {
      const r = await deliveriesOf(dispatcher.db, event.id);
      return r[0]?.status === 'delivered' ? r : undefined;
    }, 20_000);
    const attempts = await attemptsOf(dispatcher.db, delivery.delivery_id);
    expect(attempts).toHaveLength(2);
    expect(attempts[0]).toMatchObject({ attempt: 1, status_code: null, error: 'timeout' });
    expect(attempts[1]).toMatchObject({ attempt: 2, status_code: 204, error: null });
  });

  it('signs with both secrets while a secret is being rotated (current and next)', async () => {
    const userId = (await createUser(auth)).user_id;
    const path = '/rotating';
    const p = await createPartner(auth, { webhookUrl: receiver.endpoint(path), webhookSecrets: 2 });
    await grantConsent(auth, userId, p.client_id, ['profile:read']);
    const event = newEvent('user.profile.updated', userId);
    await dispatcher.publish(event);

    const [request] = await eventually(async () => {
      const got = receiver.requests(path);
      return got.length > 0 ? got : undefined;
    });
    expect(header(request, 'x-svc-signature')).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    expect(header(request, 'webhook-signature')).toMatch(/^v1,\S{44} v1,\S{44}$/);
    for (const secret of p.webhookSecrets) {
      expect(hmacValid(request, secret)).toBe(true);
      expect(stripeVerifies(request, secret).id).toBe(event.id);
      expect(standardVerifies(request, secret).id).toBe(event.id);
    }
  });

  it('sends user.consent.revoked only to the partner it names, without a consent', async () => {
    const userId = (await createUser(auth)).user_id;
    const namedPath = '/revoked-named';
    const named = await createPartner(auth, { webhookUrl: receiver.endpoint(namedPath) });
    const otherPath = '/revoked-other';
    const other = await createPartner(auth, { webhookUrl: receiver.endpoint(otherPath) });
    await grantConsent(auth, userId, other.client_id, ['profile:read']);
    const event = newEvent('user.consent.revoked', userId, named.client_id);
    await dispatcher.publish(event);

    const [request] = await eventually(async () => {
      const got = receiver.requests(namedPath);
      return got.length > 0 ? got : undefined;
    });
    expect(JSON.parse(request.rawBody.toString())).toEqual({
      created_at: event.created_at,
      id: event.id,
      type: 'user.consent.revoked',
      user_id: userId,
    });
    expect(stripeVerifies(request, named.webhookSecrets[0]).id).toBe(event.id);
    expect(standardVerifies(request, named.webhookSecrets[0]).id).toBe(event.id);
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.requests(otherPath)).toHaveLength(0);
    expect((await deliveriesOf(dispatcher.db, event.id)).map((d) => d.client_id)).toEqual([named.client_id]);
  });

  it('delivers each event of a packed message as if it came alone, drops a malformed one alone, and once', async () => {
    const [first, second] = [(await createUser(auth)).user_id, (await createUser(auth)).user_id];
    const path = '/packed';
    const partner = await createPartner(auth, { webhookUrl: receiver.endpoint(path) });
    await grantConsent(auth, first, partner.client_id, ['vessels:read']);
    await grantConsent(auth, second, partner.client_id, ['vessels:read']);
    const events = [newEvent('user.vessels.updated', first), newEvent('user.vessels.updated', second)];
    const malformed = { id: 'evt_no_type_or_member' };
    const packed = [events[0], malformed, events[1]];
    await dispatcher.publishPacked('user.vessels.updated', packed);

    const requests = await eventually(async () => {
      const got = receiver.requests(path);
      return got.length >= 2 ? got : undefined;
    });
    const byEvent = new Map(requests.map((r) => [header(r, 'x-svc-event-id'), r]));
    for (const event of events) {
      const request = byEvent.get(event.id);
      expect(request).toBeDefined();
      expect(request!.rawBody.toString('utf8')).toBe(
        `{"created_at":"${event.created_at}","id":"${event.id}","type":"user.vessels.updated","user_id":"${event.user_id}"}`,
      );
      expect(stripeVerifies(request!, partner.webhookSecrets[0])).toMatchObject({ id: event.id });
    }
    await eventually(async () => {
      const rows = await Promise.all(events.map((e) => deliveriesOf(dispatcher.db, e.id)));
      return rows.every((r) => r.length === 1 && r[0].status === 'delivered') ? true : undefined;
    });
    expect(await deliveriesOf(dispatcher.db, malformed.id)).toHaveLength(0);

    // The same packed message again (the relay publishes at least once): no new delivery.
    await dispatcher.publishPacked('user.vessels.updated', packed);
    await new Promise((r) => setTimeout(r, 1500));
    expect(receiver.requests(path)).toHaveLength(2);
    for (const event of events) expect(await deliveriesOf(dispatcher.db, event.id)).toHaveLength(1);
  });
});

describe('a disconnect, end to end (docs/rules.md, Events)', () => {
  it('tells the partner with user.consent.revoked through auth-server’s outbox; later record events reach it no more', async () => {
    const userId = (await createUser(auth)).user_id;
    const path = '/disconnected';
    const p = await createPartner(auth, { webhookUrl: receiver.endpoint(path) });
    await grantConsent(auth, userId, p.client_id, ['profile:read']);

    expect(await auth.rpc.call(AUTH_CONSENTS_REVOKE, { user_id: userId, client_id: p.client_id })).toEqual({
      revoked: true,
    });
    const [request] = await eventually(async () => {
      const got = receiver.requests(path);
      return got.length > 0 ? got : undefined;
    }, 15_000);
    expect(header(request, 'x-svc-event-type')).toBe('user.consent.revoked');
    expect(JSON.parse(request.rawBody.toString())).toMatchObject({
      type: 'user.consent.revoked',
      user_id: userId,
    });
    expect(hmacValid(request, p.webhookSecrets[0])).toBe(true);

    const later = newEvent('user.profile.updated', userId);
    await dispatcher.publish(later);
    await new Promise((r) => setTimeout(r, 1000));
    expect(await deliveriesOf(dispatcher.db, later.id)).toHaveLength(0);
    expect(receiver.requests(path)).toHaveLength(1);
  });
});
