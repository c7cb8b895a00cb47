import { execFile } from 'node:child_process';
import path from 'node:path';
import { ROOT } from '../../scripts/lib/apps.cjs';
import { eventually } from '../support/services';
import { attemptsOf, deliveriesOf, newEvent, useDeliveryStack } from '../support/starters/webhook-dispatcher';
import { createPartner, grantConsent, createUser } from '../support/app-factories';

// `npm run deliveries -- list|show|redeliver` (issue 5, item 7), run as operators run it: the
// script and the built CLI, against this run's database and RabbitMQ, while a dispatcher works.
jest.setTimeout(60_000);

/** The stack the CLI runs against: each block starts its own. */
let cliStack: { readonly services: { readonly databaseUrl: string; readonly amqpUrl: string } };

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

function deliveries(...args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(ROOT, 'scripts', 'deliveries.mjs'), ...args],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          DATABASE_URL: cliStack.services.databaseUrl,
          AMQP_URL: cliStack.services.amqpUrl,
          LOG_LEVEL: 'warn',
        },
        timeout: 30_000,
      },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** No stack trace, whatever went wrong. */
const noStack = (r: CliResult) => expect(`${r.stdout}${r.stderr}`).not.toMatch(/\n\s+at .+:\d+:\d+/);

describe('npm run deliveries', () => {
  // One retry a second after the first failure, then the delivery fails: quick to reach "failed".
  const { auth, dispatcher, receiver } = useDeliveryStack({
    WEBHOOK_RETRY_SCHEDULE: '1s',
    WEBHOOK_TIMEOUT_MS: '1000',
  });
  beforeAll(() => {
    cliStack = auth;
  });

  /** A partner whose endpoint fails twice, then answers 204; its first delivery ends failed. */
  async function failedDelivery(label: string) {
    const userId = (await createUser(auth)).user_id;
    const endpoint = `/cli-${label}`;
    const partner = await createPartner(auth, {
      webhookUrl: receiver.endpoint(endpoint, (n) => (n <= 2 ? 500 : 204)),
    });
    await grantConsent(auth, userId, partner.client_id, ['profile:read']);
    const event = newEvent('user.profile.updated', userId);
    await dispatcher.publish(event);
    const [delivery] = await eventually(async () => {
      const rows = await deliveriesOf(dispatcher.db, event.id);
      return rows[0]?.status === 'failed' ? rows : undefined;
    }, 15_000);
    return { partner, event, delivery, endpoint };
  }

  it('list: the partner’s deliveries, as a table or JSON, filtered by status', async () => {
    const { partner, event, delivery } = await failedDelivery('list');

    const table = await deliveries('list', '--client', partner.client_id);
    expect(table.code).toBe(0);
    const lines = table.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^DELIVERY\s+EVENT\s+TYPE\s+STATUS\s+ATTEMPTS\s+CREATED\s+NEXT ATTEMPT$/);
    expect(lines).toHaveLength(2);
    expect(lines[1].split(/\s+/)).toEqual([
      delivery.delivery_id,
      event.id,
      'user.profile.updated',
      'failed',
      '2',
      expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      '-',
    ]);

    const json = await deliveries('list', '--client', partner.client_id, '--status', 'failed', '--json');
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual([
      expect.objectContaining({
        delivery_id: delivery.delivery_id,
        event_id: event.id,
        client_id: partner.client_id,
        status: 'failed',
        attempts: 2,
        redelivery_of: null,
      }),
    ]);
    const delivered = await deliveries(
      'list',
      '--client',
      partner.client_id,
      '--status',
      'delivered',
      '--json',
    );
    expect(JSON.parse(delivered.stdout)).toEqual([]);
  });

  it('show: the delivery and every attempt (number, time, status code, duration, error, next attempt)', async () => {
    const { delivery, event } = await failedDelivery('show');
    const logged = await attemptsOf(dispatcher.db, delivery.delivery_id);

    const json = await deliveries('show', delivery.delivery_id, '--json');
    expect(json.code).toBe(0);
    const shown = JSON.parse(json.stdout) as Record<string, unknown> & {
      attempt_log: Record<string, unknown>[];
    };
    expect(shown).toMatchObject({ delivery_id: delivery.delivery_id, event_id: event.id, status: 'failed' });
    expect(shown.attempt_log).toEqual([
      {
        attempt: 1,
        started_at: expect.stringMatching(/Z$/),
        status_code: 500,
        duration_ms: logged[0].duration_ms,
        error: 'HTTP 500',
        next_attempt_at: logged[0].next_attempt_at?.toISOString(),
        response_body: expect.any(String),
      },
      {
        attempt: 2,
        started_at: expect.stringMatching(/Z$/),
        status_code: 500,
        duration_ms: logged[1].duration_ms,
        error: 'HTTP 500',
        next_attempt_at: null,
        response_body: expect.any(String),
      },
    ]);

    const text = await deliveries('show', delivery.delivery_id);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`delivery      ${delivery.delivery_id}`);
    expect(text.stdout).toContain('status        failed, 2 attempt(s)');
    const rows = text.stdout.split('\n').filter((l) => /^[12]\s/.test(l));
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatch(
      new RegExp(
        `^1\\s+\\S+Z\\s+500\\s+${logged[0].duration_ms} ms\\s+HTTP 500\\s+${logged[0].next_attempt_at?.toISOString()}$`,
      ),
    );
    expect(rows[1]).toMatch(/^2\s+\S+Z\s+500\s+\d+ ms\s+HTTP 500\s+-$/);
  });

  it('redeliver: a fresh attempt series, same event id and body, new delivery id', async () => {
    const { partner, event, delivery, endpoint } = await failedDelivery('redeliver');
    expect(receiver.requests(endpoint)).toHaveLength(2);

    const result = await deliveries('redeliver', delivery.delivery_id, '--json');
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
    const redelivery = JSON.parse(result.stdout) as { delivery_id: string };
    expect(redelivery).toMatchObject({
      event_id: event.id,
      client_id: partner.client_id,
      status: 'pending',
      attempts: 0,
      redelivery_of: delivery.delivery_id,
    });
    expect(redelivery.delivery_id).toMatch(/^dlv_/);
    expect(redelivery.delivery_id).not.toBe(delivery.delivery_id);

    const [third] = await eventually(async () => {
      const got = receiver.requests(endpoint).slice(2);
      return got.length > 0 ? got : undefined;
    });
    expect(third.headers['x-svc-event-id']).toBe(event.id);
    expect(third.headers['x-svc-delivery-id']).toBe(redelivery.delivery_id);
    expect(third.rawBody.toString()).toBe(delivery.body);
    const rows = await eventually(async () => {
      const r = await deliveriesOf(dispatcher.db, event.id);
      return r.some((d) => d.status === 'delivered') ? r : undefined;
    });
    expect(rows.map((r) => [r.delivery_id, r.status, r.attempts]).sort()).toEqual(
      [
        [delivery.delivery_id, 'failed', 2],
        [redelivery.delivery_id, 'delivered', 1],
      ].sort(),
    );
    // The original's log is untouched; the redelivery's starts at attempt 1.
    expect((await attemptsOf(dispatcher.db, delivery.delivery_id)).map((a) => a.attempt)).toEqual([1, 2]);
    expect(await attemptsOf(dispatcher.db, redelivery.delivery_id)).toEqual([
      expect.objectContaining({ attempt: 1, status_code: 204 }),
    ]);

    // The same event published again by the outbox still creates nothing new.
    await dispatcher.publish(event);
    await new Promise((r) => setTimeout(r, 1000));
    expect(await deliveriesOf(dispatcher.db, event.id)).toHaveLength(2);

    const text = await deliveries('redeliver', redelivery.delivery_id);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(
      new RegExp(`^dlv_\\S+ queued: event ${event.id} to ${partner.client_id} again`),
    );
  });

  it('endpoint: the health the partner sees; disabling records new events as skipped until enabled again', async () => {
    const { partner, endpoint } = await failedDelivery('endpoint');

    const shown = await deliveries('endpoint', partner.client_id, '--json');
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({
      client_id: partner.client_id,
      status: 'enabled',
      last_success_at: null,
      last_failure_at: expect.stringMatching(/Z$/),
      attempts24h: 2,
      successes24h: 0,
    });

    const disabled = await deliveries('endpoint-disable', partner.client_id, '--json');
    expect(disabled.code).toBe(0);
    expect(JSON.parse(disabled.stdout)).toMatchObject({ status: 'disabled', disabled_reason: 'operator' });

    const userId = (await createUser(auth)).user_id;
    await grantConsent(auth, userId, partner.client_id, ['profile:read']);
    const skipped = newEvent('user.profile.updated', userId);
    await dispatcher.publish(skipped);
    const [row] = await eventually(async () => {
      const rows = await deliveriesOf(dispatcher.db, skipped.id);
      return rows.length > 0 ? rows : undefined;
    }, 15_000);
    expect(row).toMatchObject({ status: 'skipped', attempts: 0 });
    expect(receiver.requests(endpoint).filter((r) => r.headers['x-svc-event-id'] === skipped.id)).toEqual([]);

    const text = await deliveries('endpoint-enable', partner.client_id);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^status\s+enabled$/m);
  });

  it('answers unknown ids and bad flags clearly, without a stack trace', async () => {
    const unknown = await deliveries('show', 'dlv_does_not_exist');
    expect(unknown).toMatchObject({ code: 2, stdout: '' });
    expect(unknown.stderr).toContain('deliveries show: no delivery dlv_does_not_exist');
    noStack(unknown);

    const unknownRedeliver = await deliveries('redeliver', 'dlv_does_not_exist');
    expect(unknownRedeliver.code).toBe(2);
    expect(unknownRedeliver.stderr).toContain('no delivery dlv_does_not_exist');

    for (const args of [
      ['list'],
      ['list', '--client', 'x', '--status', 'lost'],
      ['list', '--client', 'x', '--limit', 'many'],
      ['list', '--client', 'x', '--colour'],
      ['show'],
      ['show', 'dlv_a', 'dlv_b'],
      ['resend', 'dlv_a'],
    ]) {
      const r = await deliveries(...args);
      expect({ args, code: r.code }).toEqual({ args, code: 64 });
      expect(r.stderr).toMatch(/^deliveries \S+: .+/m);
      expect(r.stdout).toBe('');
      noStack(r);
    }
  });
});

// A delivery still on its retry schedule is left to its own series. With a retry ten minutes
// away, the delivery stays pending however long the CLI takes to start on a loaded machine.
describe('npm run deliveries, while a delivery is on its retry schedule', () => {
  const long = useDeliveryStack({ WEBHOOK_RETRY_SCHEDULE: '10m', WEBHOOK_TIMEOUT_MS: '1000' });
  beforeAll(() => {
    cliStack = long.auth;
  });

  it('refuses to redeliver it, clearly, without a stack trace', async () => {
    const userId = (await createUser(long.auth)).user_id;
    const endpoint = '/cli-pending';
    const partner = await createPartner(long.auth, {
      webhookUrl: long.receiver.endpoint(endpoint, () => 'hang'),
    });
    await grantConsent(long.auth, userId, partner.client_id, ['profile:read']);
    const event = newEvent('user.profile.updated', userId);
    await long.dispatcher.publish(event);
    const [pending] = await eventually(async () => {
      const r = await deliveriesOf(long.dispatcher.db, event.id);
      return r.length > 0 ? r : undefined;
    });
    const refused = await deliveries('redeliver', pending.delivery_id);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`${pending.delivery_id} is still pending`);
    noStack(refused);
    expect(await deliveriesOf(long.dispatcher.db, event.id)).toHaveLength(1);
  });
});
