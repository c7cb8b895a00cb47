import {
  CREW_EVENTS_EXCHANGE,
  EVENT_BATCH_CONTENT_TYPE,
  parseEventBatch,
  SANDBOX_MEMBERS,
  type EventType,
  type ServiceEvent,
} from '@svc/contracts';
import * as amqp from 'amqplib';
import { RecordWriter } from '../../apps/crew-api/src/records/record-writer.service';
import {
  addVesselPeriods,
  createCrewMember,
  databaseToday,
  outboxEvents,
  type FactoryMember,
  type OutboxRow,
} from '../support/app-factories';
import { request, expectInvalidFields, expectProblem } from '../support/http';
import { useCrewApi, type CrewApiHarness } from '../support/starters/crew-api';
import { eventually } from '../support/services';

/**
 * The internal records API (docs/rules.md, Record changes): token-protected, validated field by
 * field, echoing what it wrote; each write commits with its event row in crew-api's outbox (one
 * transaction), the relay publishes it to `crew.events` with the event type as routing key, and a
 * write that fails or is refused leaves neither a change nor an event.
 */
jest.setTimeout(30_000);

const { auth, crew } = useCrewApi();
/**
 * What the outbox relay published, as a consumer (the webhook dispatcher) receives it: a queue of
 * this file's bound to every routing key of crew.events; a pack's events one by one, under their
 * own message ids.
 */
const published: { routingKey: string; messageId: string; body: ServiceEvent }[] = [];
let broker: amqp.ChannelModel | undefined;

beforeAll(async () => {
  broker = await amqp.connect(auth.services.amqpUrl);
  const channel = await broker.createChannel();
  await channel.assertExchange(CREW_EVENTS_EXCHANGE, 'topic', { durable: true });
  const { queue } = await channel.assertQueue('', { exclusive: true, autoDelete: true });
  await channel.bindQueue(queue, CREW_EVENTS_EXCHANGE, '#');
  await channel.consume(
    queue,
    (msg) => {
      if (!msg) return;
      const content: unknown = JSON.parse(msg.content.toString('utf8'));
      const events =
        msg.properties.contentType === EVENT_BATCH_CONTENT_TYPE
          ? parseEventBatch(content).map((e) => ({
              messageId: e.message_id,
              body: e.payload as ServiceEvent,
            }))
          : [{ messageId: String(msg.properties.messageId), body: content as ServiceEvent }];
      for (const e of events) published.push({ routingKey: msg.fields.routingKey, ...e });
    },
    { noAck: true },
  );
}, 60_000);

afterAll(async () => {
  await broker?.close();
});

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

async function recordUpdatedAt(userId: string): Promise<string> {
  const { rows } = await crew.db.query<{ t: string }>(
    'SELECT record_updated_at::text AS t FROM crew.crew_members WHERE user_id = $1',
    [userId],
  );
  return rows[0].t;
}

/**
 * The events `action` added to the outbox for `member`, each checked as a ServiceEvent on
 * crew.events, and each seen published with its type as routing key and its id as message id.
 */
async function eventsOf(member: FactoryMember, action: () => Promise<unknown>): Promise<EventType[]> {
  const before = (await outboxEvents(crew.db, member.user_id)).length;
  await action();
  const added: OutboxRow[] = (await outboxEvents(crew.db, member.user_id)).slice(before);
  for (const row of added) {
    expect(row.exchange).toBe(CREW_EVENTS_EXCHANGE);
    expect(row.routing_key).toBe(row.payload.type);
    expect(row.message_id).toBe(row.payload.id);
    expect(Object.keys(row.payload).sort()).toEqual(['created_at', 'id', 'type', 'user_id']);
    expect(row.payload.id).toMatch(/^evt_[A-Za-z0-9_-]+$/);
    expect(row.payload.user_id).toBe(member.user_id);
    expect(row.payload.created_at).toMatch(ISO_MS);
    const seen = await eventually(
      async () => published.find((m) => m.messageId === row.message_id),
      10_000,
      50,
    );
    expect(seen.routingKey).toBe(row.payload.type);
    expect(seen.body).toEqual(row.payload);
  }
  return added.map((r) => r.payload.type);
}

const newPeriod = {
  imo: 'IMO 9321483',
  name: 'Atlantic Meridian',
  role: 'Chief Officer',
  period_start: '2025-03-01T00:00:00Z',
  period_end: '2025-04-15T12:00:00+02:00',
  nautical_miles: 8800,
};

describe('authentication: Bearer <INTERNAL_API_TOKEN>', () => {
  const alex = SANDBOX_MEMBERS[0];
  const calls: [string, string, unknown][] = [
    ['PATCH', `/internal/v1/crew/${alex.user_id}/profile`, { role: 'Master' }],
    ['POST', `/internal/v1/crew/${alex.user_id}/sea-time-entries`, {}],
    ['POST', `/internal/v1/crew/${alex.user_id}/vessel-periods`, {}],
    ['PATCH', `/internal/v1/crew/${alex.user_id}/vessel-periods/vp_x`, {}],
    ['GET', `/internal/v1/users?email=${encodeURIComponent(alex.email)}`, undefined],
  ];

  it.each(calls)('%s %s with another token → 401 invalid_token', async (method, path, body) => {
    const res = await crew.internal(method, path, body, 'sandbox-internal-token');
    expectProblem(res, 401, 'invalid_token');
    expect(res.header('www-authenticate')).toBe('Bearer error="invalid_token"');
  });

  it('without credentials → 401 with a bare challenge, and nothing written', async () => {
    const before = await recordUpdatedAt(alex.user_id);
    const res = await request(`${crew.url}/internal/v1/crew/${alex.user_id}/profile`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ role: 'Master' }),
    });
    expectProblem(res, 401, 'invalid_token');
    expect(res.header('www-authenticate')).toBe('Bearer');
    expect(await recordUpdatedAt(alex.user_id)).toBe(before);
  });
});

describe('PATCH /internal/v1/crew/{user_id}/profile → user.profile.updated', () => {
  it('writes the fields given, echoes the profile and commits one event', async () => {
    const member = await createCrewMember(auth, crew, { role: 'Bosun', country: 'NO' });
    let res!: Awaited<ReturnType<CrewApiHarness['internal']>>;
    const types = await eventsOf(member, async () => {
      res = await crew.internal('PATCH', `/internal/v1/crew/${member.user_id}/profile`, {
        name: '  Kari Nordmann ',
        role: 'Third Officer',
        photo_url: 'https://photos.example/kari.jpg',
      });
    });
    expect(res.status).toBe(200);
    expect(res.header('cache-control')).toBe('no-store');
    expect(res.json()).toEqual({
      user_id: member.user_id,
      email: member.email,
      name: 'Kari Nordmann',
      role: 'Third Officer',
      country: 'NO',
      photo_url: 'https://photos.example/kari.jpg',
      record_updated_at: expect.stringMatching(ISO_MS),
    });
    expect(types).toEqual(['user.profile.updated']);
    const cleared = await crew.internal('PATCH', `/internal/v1/crew/${member.user_id}/profile`, {
      photo_url: null,
    });
    expect(cleared.json<{ photo_url: unknown }>().photo_url).toBeNull();
  });

  it('changes nothing and announces nothing when the values are the same', async () => {
    const member = await createCrewMember(auth, crew, { role: 'Bosun' });
    const before = await recordUpdatedAt(member.user_id);
    const types = await eventsOf(member, async () => {
      const res = await crew.internal('PATCH', `/internal/v1/crew/${member.user_id}/profile`, {
        role: 'Bosun',
      });
      expect(res.status).toBe(200);
    });
    expect(types).toEqual([]);
    expect(await recordUpdatedAt(member.user_id)).toBe(before);
  });

  it('refuses invalid fields all at once (422), writing nothing and no event', async () => {
    const member = await createCrewMember(auth, crew);
    const before = await recordUpdatedAt(member.user_id);
    const types = await eventsOf(member, async () => {
      const res = await crew.internal('PATCH', `/internal/v1/crew/${member.user_id}/profile`, {
        name: '   ',
        role: 42,
        photo_url: 'ftp://photos.example/x.jpg',
        nickname: 'Kari',
      });
      expectInvalidFields(res, ['name', 'role', 'photo_url', 'nickname']);
    });
    expect(types).toEqual([]);
    expect(await recordUpdatedAt(member.user_id)).toBe(before);
  });

  it.each([
    [{}, ['body']],
    [[], ['body']],
    ['"text"', ['body']],
  ])('refuses the body %p', async (body, fields) => {
    const member = await createCrewMember(auth, crew);
    const res = await crew.internal('PATCH', `/internal/v1/crew/${member.user_id}/profile`, body);
    expectInvalidFields(res, fields);
  });

  it('answers 404 for an unknown member', async () => {
    const res = await crew.internal('PATCH', '/internal/v1/crew/usr_nobody/profile', { role: 'Master' });
    expectProblem(res, 404, 'not_found');
  });
});

describe('POST /internal/v1/crew/{user_id}/sea-time-entries → user.sea_time.updated', () => {
  it('creates the entry (201), echoes it and commits one event', async () => {
    const member = await createCrewMember(auth, crew);
    const today = await databaseToday(crew.db);
    let res!: Awaited<ReturnType<CrewApiHarness['internal']>>;
    const types = await eventsOf(member, async () => {
      res = await crew.internal('POST', `/internal/v1/crew/${member.user_id}/sea-time-entries`, {
        date: today,
        days_at_sea: 12,
        nautical_miles: 2380,
        role: 'Second Officer',
        verified: true,
      });
    });
    expect(res.status).toBe(201);
    expect(res.json()).toEqual({
      id: expect.stringMatching(/^ste_[A-Za-z0-9_-]+$/),
      user_id: member.user_id,
      date: today,
      days_at_sea: 12,
      nautical_miles: 2380,
      role: 'Second Officer',
      verified: true,
      created_at: expect.stringMatching(ISO_MS),
    });
    expect(types).toEqual(['user.sea_time.updated']);
  });

  it('takes verified as false when absent', async () => {
    const member = await createCrewMember(auth, crew);
    const res = await crew.internal('POST', `/internal/v1/crew/${member.user_id}/sea-time-entries`, {
      date: '2024-02-29',
      days_at_sea: 0,
      nautical_miles: 0,
      role: 'Deck Cadet',
    });
    expect(res.status).toBe(201);
    expect(res.json<{ verified: boolean }>().verified).toBe(false);
  });

  it('refuses invalid fields (422) and writes no event', async () => {
    const member = await createCrewMember(auth, crew);
    const types = await eventsOf(member, async () => {
      const res = await crew.internal('POST', `/internal/v1/crew/${member.user_id}/sea-time-entries`, {
        date: '2024-02-30',
        days_at_sea: -1,
        nautical_miles: 1.5,
        role: '',
        verified: 'yes',
      });
      expectInvalidFields(res, ['date', 'days_at_sea', 'nautical_miles', 'role', 'verified']);
      const future = await crew.internal('POST', `/internal/v1/crew/${member.user_id}/sea-time-entries`, {
        date: '2999-01-01',
        days_at_sea: 1,
        nautical_miles: 1,
        role: 'Master',
      });
      expectInvalidFields(future, ['date']);
    });
    expect(types).toEqual([]);
  });
});

describe('vessel periods → user.vessels.updated (and user.sea_time.updated when vessels_served changes)', () => {
  it('POST adds a period (201) and echoes it; a new ship also changes the totals', async () => {
    const member = await createCrewMember(auth, crew);
    let res!: Awaited<ReturnType<CrewApiHarness['internal']>>;
    const types = await eventsOf(member, async () => {
      res = await crew.internal('POST', `/internal/v1/crew/${member.user_id}/vessel-periods`, newPeriod);
    });
    expect(res.status).toBe(201);
    expect(res.json()).toEqual({
      id: expect.stringMatching(/^vp_[A-Za-z0-9_-]+$/),
      user_id: member.user_id,
      imo: '9321483',
      name: 'Atlantic Meridian',
      role: 'Chief Officer',
      period_start: '2025-03-01T00:00:00.000Z',
      period_end: '2025-04-15T10:00:00.000Z',
      days: 46,
      nautical_miles: 8800,
      version: 1,
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(types.sort()).toEqual(['user.sea_time.updated', 'user.vessels.updated']);

    const again = await eventsOf(member, async () => {
      const second = await crew.internal('POST', `/internal/v1/crew/${member.user_id}/vessel-periods`, {
        ...newPeriod,
        period_start: '2025-06-01',
        period_end: '2025-06-21',
        days: 19,
      });
      expect(second.status).toBe(201);
      expect(second.json<{ days: number }>().days).toBe(19);
    });
    expect(again).toEqual(['user.vessels.updated']);
  });

  it('PATCH amends a period into version 2; changing its ship changes the totals too', async () => {
    const member = await createCrewMember(auth, crew);
    const [period] = await addVesselPeriods(crew.db, member.user_id, 3, { vessels: 2 });
    let res!: Awaited<ReturnType<CrewApiHarness['internal']>>;
    const roleOnly = await eventsOf(member, async () => {
      res = await crew.internal('PATCH', `/internal/v1/crew/${member.user_id}/vessel-periods/${period.id}`, {
        role: 'Master',
      });
    });
    expect(res.status).toBe(200);
    expect(res.json()).toMatchObject({ id: period.id, version: 2, role: 'Master', imo: period.imo });
    expect(roleOnly).toEqual(['user.vessels.updated']);

    const newShip = await eventsOf(member, async () => {
      const moved = await crew.internal(
        'PATCH',
        `/internal/v1/crew/${member.user_id}/vessel-periods/${period.id}`,
        {
          imo: '9595321',
        },
      );
      expect(moved.json()).toMatchObject({ version: 3, imo: '9595321' });
    });
    expect(newShip.sort()).toEqual(['user.sea_time.updated', 'user.vessels.updated']);

    const { rows } = await crew.db.query<{ version: number; open: boolean }>(
      `SELECT version, valid_to IS NULL AS open FROM crew.vessel_period_versions WHERE period_id = $1 ORDER BY version`,
      [period.id],
    );
    expect(rows).toEqual([
      { version: 1, open: false },
      { version: 2, open: false },
      { version: 3, open: true },
    ]);
  });

  it('refuses invalid fields (422) and writes no event', async () => {
    const member = await createCrewMember(auth, crew);
    const types = await eventsOf(member, async () => {
      const res = await crew.internal('POST', `/internal/v1/crew/${member.user_id}/vessel-periods`, {
        imo: '9321484',
        period_start: 'last spring',
        period_end: '2025-01-01T00:00:00',
        nautical_miles: -5,
      });
      expectInvalidFields(res, ['imo', 'name', 'role', 'period_start', 'period_end', 'nautical_miles']);
      const reversed = await crew.internal('POST', `/internal/v1/crew/${member.user_id}/vessel-periods`, {
        ...newPeriod,
        period_end: '2025-02-01T00:00:00Z',
      });
      expectInvalidFields(reversed, ['period_end']);
    });
    expect(types).toEqual([]);
  });

  it('rolls an amendment back when the stored period makes it invalid: no version, no event', async () => {
    const member = await createCrewMember(auth, crew);
    const [period] = await addVesselPeriods(crew.db, member.user_id, 1);
    const before = await recordUpdatedAt(member.user_id);
    const types = await eventsOf(member, async () => {
      const res = await crew.internal(
        'PATCH',
        `/internal/v1/crew/${member.user_id}/vessel-periods/${period.id}`,
        {
          period_end: '2000-01-01T00:00:00Z',
        },
      );
      expectInvalidFields(res, ['period_end']);
    });
    expect(types).toEqual([]);
    expect(await recordUpdatedAt(member.user_id)).toBe(before);
  });

  it("answers 404 for an unknown period or another member's period", async () => {
    const member = await createCrewMember(auth, crew);
    const other = await createCrewMember(auth, crew);
    const [foreign] = await addVesselPeriods(crew.db, other.user_id, 1);
    for (const id of ['vp_unknown', foreign.id]) {
      const res = await crew.internal('PATCH', `/internal/v1/crew/${member.user_id}/vessel-periods/${id}`, {
        role: 'Master',
      });
      expectProblem(res, 404, 'not_found');
    }
    expect(await outboxEvents(crew.db, member.user_id)).toEqual([]);
  });
});

describe('a write that fails after its change and its event were written', () => {
  it('rolls back both: no event is committed, the record keeps its time', async () => {
    const member = await createCrewMember(auth, crew);
    const before = await recordUpdatedAt(member.user_id);
    const writer = crew.app.get(RecordWriter, { strict: false });
    const types = await eventsOf(member, async () => {
      await expect(
        writer.write(member.user_id, async (write) => {
          await write.stamp();
          write.emit('user.profile.updated');
          await write.tx.query(`UPDATE crew.crew_members SET role = 'Changed' WHERE user_id = $1`, [
            member.user_id,
          ]);
          throw new Error('the change failed');
        }),
      ).rejects.toThrow('the change failed');
    });
    expect(types).toEqual([]);
    expect(await recordUpdatedAt(member.user_id)).toBe(before);
  });
});

describe('GET /internal/v1/users?email=', () => {
  it('finds a member by e-mail, case and spaces ignored', async () => {
    const alex = SANDBOX_MEMBERS[0];
    const res = await crew.internal(
      'GET',
      `/internal/v1/users?email=${encodeURIComponent(' ALEX.Morgan@sandbox.test ')}`,
    );
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({ user_id: alex.user_id, email: alex.email });
  });

  it('answers 404 for an unknown e-mail and 422 without a valid one', async () => {
    expectProblem(
      await crew.internal('GET', '/internal/v1/users?email=nobody%40sandbox.test'),
      404,
      'not_found',
    );
    expectInvalidFields(await crew.internal('GET', '/internal/v1/users'), ['email']);
    expectInvalidFields(await crew.internal('GET', '/internal/v1/users?email=not-an-address'), ['email']);
  });
});
