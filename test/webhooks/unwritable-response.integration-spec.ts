import { randomBytes } from 'node:crypto';
import { dataSourceOptions, Sql } from '@svc/platform';
import { DataSource } from 'typeorm';
import { DeliveriesRepository } from '../../apps/webhook-dispatcher/src/deliveries/deliveries.repository';
import { eventually, testServices } from '../support/services';
import { TestEndpoint } from '../support/webhook-receiver';
import { deliveriesOf, newEvent, useDeliveryStack } from '../support/starters/webhook-dispatcher';
import { createPartner, grantConsent, createUser } from '../support/app-factories';

// Whatever bytes an endpoint answers are recorded, and recording one partner's attempt never
// fails another's: an endpoint answering `200 ok\0` (PostgreSQL refuses NUL in text) once got the
// same event again and again, and so did every partner whose attempt shared its batch.
jest.setTimeout(60_000);

const { auth, dispatcher } = useDeliveryStack({ WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s,1s,1s' });

/** An endpoint answering `status` with exactly these bytes. */
const rawEndpoint = (body: Buffer, status = 200) =>
  new TestEndpoint((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(status, { 'content-type': 'application/octet-stream' }).end(body));
  });

const answers: Record<string, Buffer> = {
  'ok and NUL': Buffer.from('ok\0', 'latin1'),
  'invalid UTF-8': Buffer.from([0x6f, 0x6b, 0xff, 0xfe, 0xc3, 0x28, 0xe2, 0x82]),
  '4 KB of binary with NULs': Buffer.concat([Buffer.alloc(16), randomBytes(4080)]),
  'plain text': Buffer.from('thanks'),
};

async function storedBodies(eventId: string): Promise<Map<string, string | null>> {
  const { rows } = await dispatcher.db.query<{ client_id: string; response_body: string | null }>(
    `SELECT d.client_id, a.response_body FROM webhooks.deliveries d
       JOIN webhooks.delivery_attempts a ON a.delivery_id = d.delivery_id WHERE d.event_id = $1`,
    [eventId],
  );
  return new Map(rows.map((r) => [r.client_id, r.response_body]));
}

describe('any bytes an endpoint answers are recorded once, and the event is not sent again', () => {
  it('four partners of one event (one attempt batch): NUL, invalid UTF-8, 4 KB binary, plain text', async () => {
    const userId = (await createUser(auth)).user_id;
    const endpoints = Object.entries(answers).map(([name, body]) => ({
      name,
      body,
      endpoint: rawEndpoint(body),
    }));
    try {
      const partners: { name: string; endpoint: TestEndpoint; clientId: string }[] = [];
      for (const e of endpoints) {
        const partner = await createPartner(auth, { webhookUrl: await e.endpoint.start() });
        await grantConsent(auth, userId, partner.client_id, ['profile:read']);
        partners.push({ ...e, clientId: partner.client_id });
      }
      const event = newEvent('user.profile.updated', userId);
      await dispatcher.publish(event);

      const rows = await eventually(async () => {
        const r = await deliveriesOf(dispatcher.db, event.id);
        return r.length === partners.length && r.every((d) => d.status === 'delivered') ? r : undefined;
      });
      expect(rows.map((r) => r.attempts)).toEqual(partners.map(() => 1));
      // Long enough for a message that failed to be recorded to come back (parked 5 s) and be sent again.
      await new Promise((r) => setTimeout(r, 7000));
      expect(partners.map((p) => [p.name, p.endpoint.requests])).toEqual(partners.map((p) => [p.name, 1]));
      expect((await deliveriesOf(dispatcher.db, event.id)).map((d) => [d.status, d.attempts])).toEqual(
        partners.map(() => ['delivered', 1]),
      );

      const bodies = await storedBodies(event.id);
      const of = (name: string) => bodies.get(partners.find((p) => p.name === name)?.clientId ?? '');
      expect(of('ok and NUL')).toBe('ok\uFFFD');
      expect(of('invalid UTF-8')).toBe('ok\uFFFD\uFFFD\uFFFD(\uFFFD');
      expect(of('plain text')).toBe('thanks');
      const binary = of('4 KB of binary with NULs') ?? '';
      expect(binary.startsWith('\uFFFD'.repeat(16))).toBe(true);
      expect(binary).not.toContain('\0');
      expect(Buffer.byteLength(binary)).toBeLessThanOrEqual(1024 * 3);
    } finally {
      await Promise.all(endpoints.map((e) => e.endpoint.close()));
    }
  });
});

describe('DeliveriesRepository.recordAttempt: a record that cannot be written fails alone', () => {
  const services = testServices();
  let dataSource: DataSource;
  let repository: DeliveriesRepository;
  const run = `unw_${randomBytes(5).toString('hex')}`;

  beforeAll(async () => {
    dataSource = new DataSource(
      dataSourceOptions(
        'unwritable-response-test',
        { DATABASE_URL: services.databaseUrl, DATABASE_POOL_SIZE: 2 },
        { schema: 'webhooks', migrations: [] },
      ),
    );
    await dataSource.initialize();
    repository = new DeliveriesRepository(new Sql(dataSource, 'unwritable-response-test'), {
      WEBHOOK_DISABLE_AFTER: 5 * 86_400_000,
    });
  });
  afterAll(async () => {
    await dataSource.query('DELETE FROM webhooks.deliveries WHERE delivery_id LIKE $1', [`${run}%`]);
    await dataSource.query('DELETE FROM webhooks.webhook_endpoints WHERE client_id LIKE $1', [`${run}%`]);
    await dataSource.destroy();
  });

  it("another partner's record in the same batch is written, and the bad one's caller alone hears the refusal", async () => {
    const ids = ['first', 'bad', 'other'].map((n) => `${run}_${n}`);
    for (const id of ids) {
      await dataSource.query(
        `INSERT INTO webhooks.deliveries (delivery_id, event_id, event_type, user_id, client_id, target_url, body)
         VALUES ($1, $2, 'user.profile.updated', 'usr_x', $3, 'https://partner.example/hook', '{}')`,
        [id, `evt_${id}`, `${run}_client_${id.endsWith('bad') ? 'a' : 'b'}`],
      );
    }
    const record = (deliveryId: string, responseBody: string) =>
      repository.recordAttempt({
        deliveryId,
        clientId: `${run}_client_${deliveryId.endsWith('bad') ? 'a' : 'b'}`,
        attempt: 1,
        targetUrl: 'https://partner.example/hook',
        startedAt: new Date(),
        durationMs: 3,
        statusCode: 200,
        error: null,
        nextAttemptAt: null,
        status: 'delivered',
        giveUpReason: null,
        // The repository stores what it is given: NUL here stands for any value PostgreSQL refuses.
        responseBody,
        reached: true,
        ok: true,
      });
    // The first holds the batcher's one slot; the next two wait for it and share the next batch.
    const first = record(ids[0], 'fine');
    const [bad, other] = await Promise.allSettled([record(ids[1], 'ok\0'), record(ids[2], 'fine too')]);
    await first;
    expect(bad.status).toBe('rejected');
    expect(other).toEqual({ status: 'fulfilled', value: { counted: true, endpointDisabled: false } });
    const rows = await dataSource.query<{ delivery_id: string; status: string }[]>(
      'SELECT delivery_id, status FROM webhooks.deliveries WHERE delivery_id = ANY($1) ORDER BY delivery_id',
      [ids],
    );
    expect(Object.fromEntries(rows.map((r) => [r.delivery_id, r.status]))).toEqual({
      [ids[0]]: 'delivered',
      [ids[1]]: 'pending',
      [ids[2]]: 'delivered',
    });
  });
});
