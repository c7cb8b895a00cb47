import { randomBytes } from 'node:crypto';
import { dataSourceOptions, sha256Hex, Sql } from '@svc/platform';
import { DataSource } from 'typeorm';
import { PortalLinksRepository } from '../../apps/auth-server/src/portal/portal-links.repository';
import { portalSessionKind } from '../../apps/consent-ui/src/portal/portal-cookies';
import { crewSessionKind } from '../../apps/consent-ui/src/sessions/session-cookies';
import { SessionsRepository } from '../../apps/consent-ui/src/sessions/sessions.repository';
import { createPartner } from '../support/app-factories';
import { useAuthServer } from '../support/starters/auth-server';
import { testServices } from '../support/services';

/**
 * The tables pruned when a row is added rather than by a job (docs/operations.md, "What the
 * databases keep"), against real PostgreSQL: crew members' sessions and partner portal sessions
 * once expired, portal links a day past expiry. Rows carry this test's own ids and dates far in
 * the past, so they are the oldest a bounded purge meets.
 */
const services = testServices();
const digest = () => sha256Hex(randomBytes(16).toString('hex'));
const LONG_AGO = new Date('2001-01-01T00:00:00Z');
const minutes = (from: Date, n: number) => new Date(from.getTime() + n * 60_000);

async function dataSource(schema: string): Promise<DataSource> {
  const ds = new DataSource(
    dataSourceOptions(
      `on-write-purges-${schema}`,
      { DATABASE_URL: services.databaseUrl, DATABASE_POOL_SIZE: 2 },
      { schema, migrations: [] },
    ),
  );
  return ds.initialize();
}

describe('consent-ui sessions: expired ones go on the next sign-in', () => {
  let consent: DataSource;
  let sessions: SessionsRepository;
  const crew = crewSessionKind({ secure: true }, 30 * 60_000);
  const portal = portalSessionKind({ secure: true });

  beforeAll(async () => {
    consent = await dataSource('consent');
    const sql = new Sql(consent, 'on-write-purges-consent');
    sessions = new SessionsRepository(sql);
  });

  afterAll(async () => {
    await consent?.destroy();
  });

  const exists = async (table: string, idDigest: string) =>
    ((await consent.query(`SELECT 1 FROM consent.${table} WHERE id_digest = $1`, [idDigest])) as unknown[])
      .length === 1;

  it('crew members’ sessions: the expired go, the live stay', async () => {
    const now = new Date();
    const session = (expiresAt: Date, createdAt = minutes(expiresAt, -60)) => ({
      idDigest: digest(),
      userId: 'usr_purge',
      csrfSecret: 'x',
      createdAt,
      lastSeenAt: createdAt,
      expiresAt,
    });
    const expired = [session(LONG_AGO), session(minutes(LONG_AGO, 1))];
    const live = session(minutes(now, 60), now);
    for (const s of [...expired, live]) await sessions.insert(crew, s);

    expect(await sessions.deleteExpired(crew, now, 100)).toBeGreaterThanOrEqual(2);

    for (const s of expired) expect(await exists('sessions', s.idDigest)).toBe(false);
    expect(await exists('sessions', live.idDigest)).toBe(true);
    await sessions.delete(crew, live.idDigest);
  });

  it('partner portal sessions: the expired go, the live stay', async () => {
    const now = new Date();
    const session = (createdAt: Date) => ({
      idDigest: digest(),
      ref: `pps_${randomBytes(8).toString('hex')}`,
      clientId: 'it-purge',
      partnerName: 'Purge',
      sponsorship: false,
      frameOrigins: [],
      csrfSecret: 'x',
      createdAt,
      expiresAt: minutes(createdAt, 60),
    });
    const expired = [session(LONG_AGO), session(minutes(LONG_AGO, 1))];
    const live = session(now);
    for (const s of [...expired, live]) await sessions.insert(portal, s);

    expect(await sessions.deleteExpired(portal, now, 100)).toBeGreaterThanOrEqual(2);

    for (const s of expired) expect(await exists('portal_sessions', s.idDigest)).toBe(false);
    expect(await exists('portal_sessions', live.idDigest)).toBe(true);
    await sessions.delete(portal, live.idDigest);
  });
});

describe('auth-server portal links: a day past expiry they go when a new link is made', () => {
  const { auth } = useAuthServer();

  it('drops links expired over a day ago and keeps the recently expired and the live', async () => {
    const links = auth.app.get(PortalLinksRepository);
    const partner = await createPartner(auth);
    const now = new Date();
    const [old, recent, fresh] = [digest(), digest(), digest()];
    await links.insert(old, partner.client_id, minutes(now, 5));
    await links.insert(recent, partner.client_id, minutes(now, 5));
    const db = auth.app.get(DataSource);
    await db.query(`UPDATE auth.portal_links SET created_at = $2, expires_at = $3 WHERE token_digest = $1`, [
      old,
      LONG_AGO,
      minutes(LONG_AGO, 5),
    ]);
    await db.query(
      `UPDATE auth.portal_links SET created_at = now() - interval '2 hours',
                                    expires_at = now() - interval '1 hour' WHERE token_digest = $1`,
      [recent],
    );

    await links.insert(fresh, partner.client_id, minutes(now, 5));

    const { length } = (await db.query(`SELECT 1 FROM auth.portal_links WHERE token_digest = $1`, [
      old,
    ])) as unknown[];
    expect(length).toBe(0);
    const kept = (await db.query(
      `SELECT token_digest FROM auth.portal_links WHERE token_digest = ANY($1::text[]) ORDER BY created_at`,
      [[recent, fresh]],
    )) as { token_digest: string }[];
    expect(kept.map((r) => r.token_digest)).toEqual([recent, fresh]);
  });
});
