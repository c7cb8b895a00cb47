import type { INestApplicationContext } from '@nestjs/common';
import type { SandboxPartner, Scope, ServiceEvent } from '@svc/contracts';
import { TransactionRunner } from '@svc/platform';
import { randomBytes } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import { ConsentsRepository } from '../../apps/auth-server/src/consents/consents.repository';
import { TokensService } from '../../apps/auth-server/src/tokens/tokens.service';
import { PartnersService } from '../../apps/auth-server/src/partners/partners.service';
import { UsersService } from '../../apps/auth-server/src/users/users.service';
import { MembersRepository } from '../../apps/crew-api/src/members/members.repository';
import type { CrewApiHarness } from './starters/crew-api';

/**
 * auth-server's data (partners, members' sign-in identities, consents), made by auth-server itself:
 * through the services of the in-process app, the way its partner CLI and sandbox seed write them,
 * so a test never depends on the layout of auth-server's tables.
 */
export interface AuthApp {
  readonly app: INestApplicationContext;
}

export interface PartnerOptions {
  /** Client id `<label>-<random>`, name `<label> test`, redirect URI `https://<label>.example/cb`. */
  readonly label?: string;
  readonly scopes?: readonly Scope[];
  readonly webhookUrl?: string | null;
  /** 2: a webhook-secret rotation in progress, deliveries signed with both. */
  readonly webhookSecrets?: 1 | 2;
  readonly sponsorship?: boolean;
  readonly memberLeft?: boolean;
  readonly suspended?: boolean;
}

/** A partner as the sandbox ones are described, with its webhook secrets (current first; none without a URL). */
export interface TestPartner extends SandboxPartner {
  readonly webhookSecrets: string[];
}

/**
 * A partner of the test's own, registered through auth-server's PartnersService as the admin CLI
 * registers one, so what the test does to it (suspend it, rotate its secret, change its seats)
 * touches no other test's partner.
 */
export async function createPartner(auth: AuthApp, options: PartnerOptions = {}): Promise<TestPartner> {
  const partners = auth.app.get(PartnersService);
  const label = options.label ?? 'it';
  const clientId = `${label}-${randomBytes(6).toString('hex')}`;
  const partner = {
    client_id: clientId,
    name: `IT ${clientId}`,
    scopes: [...(options.scopes ?? ['profile:read', 'seatime:read'])],
    redirect_uris: [`https://${label}.example/cb`],
    webhook: Boolean(options.webhookUrl),
    sponsorship: options.sponsorship ?? false,
    member_left: options.memberLeft ?? false,
    suspended: options.suspended ?? false,
  };
  const { clientSecret, webhookSecret } = await partners.register({
    clientId,
    name: partner.name,
    redirectUris: partner.redirect_uris,
    scopes: partner.scopes,
    webhookUrl: options.webhookUrl ?? undefined,
    sponsorship: partner.sponsorship,
    memberLeft: partner.member_left,
  });
  const webhookSecrets = webhookSecret ? [webhookSecret] : [];
  if (webhookSecret && options.webhookSecrets === 2) {
    webhookSecrets.push(await partners.rotateWebhookSecret(clientId));
  }
  if (partner.suspended) await auth.app.get(TokensService).setPartnerSuspended(clientId, true);
  return { ...partner, client_secret: clientSecret, webhookSecrets };
}

export interface FactoryMember {
  readonly user_id: string;
  readonly email: string;
  readonly name: string;
}

/** A member's sign-in identity (no crew record): a new user id and e-mail on every call. */
export async function createUser(auth: AuthApp, name?: string): Promise<FactoryMember> {
  const suffix = randomBytes(6).toString('hex');
  const user = {
    user_id: `usr_test_${suffix}`,
    email: `crew-${suffix}@factory.test`,
    name: name ?? `Crew ${suffix}`,
  };
  const password = randomBytes(12).toString('hex');
  await auth.app
    .get(UsersService)
    .seedAll([{ userId: user.user_id, email: user.email, name: user.name, password }]);
  return user;
}

/** The member allowed the partner these scopes (as the consent screen records it). */
export async function grantConsent(
  auth: AuthApp,
  userId: string,
  clientId: string,
  scopes: readonly string[],
): Promise<void> {
  const consents = auth.app.get(ConsentsRepository);
  await auth.app.get(TransactionRunner).run((tx) => consents.grant(tx, userId, clientId, scopes));
}

/**
 * Crew members and their records for the crew-api tests. A member is made by the apps that own
 * it: the sign-in identity by auth-server (consents and tokens refer to it), the crew record by
 * crew-api's own repository (no registration event: specs see only the events they cause).
 * Records of realistic size for crew-api's own pagination and volume specs are written into
 * crew-api's schema in one set-based statement each. Every call makes a new member, so tests
 * never share mutable data and can run alone and in any order.
 *
 * Those bulk writes follow crew-api's rule: the member's row is locked, the write time is taken
 * under the lock, and the record's change times are set to it.
 */
export interface CrewMemberOptions {
  readonly name?: string;
  readonly role?: string;
  readonly country?: string;
  readonly photoUrl?: string | null;
}

export async function createCrewMember(
  auth: AuthApp,
  crew: Pick<CrewApiHarness, 'app'>,
  options: CrewMemberOptions = {},
): Promise<FactoryMember> {
  const member = await createUser(auth, options.name);
  const members = crew.app.get(MembersRepository);
  const registration = {
    userId: member.user_id,
    email: member.email,
    name: member.name,
    role: options.role ?? 'Able Seafarer',
    country: options.country ?? 'NO',
    photoUrl: options.photoUrl ?? null,
  };
  await crew.app.get(TransactionRunner).run((tx) => members.insertMember(tx, registration));
  return member;
}

/** Runs `work` as one record write: member row locked, write time taken, record times set. */
async function recordWrite(
  db: Pool,
  userId: string,
  vessels: boolean,
  work: (client: PoolClient, writeTime: string) => Promise<void>,
): Promise<void> {
  const client = await db.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT 1 FROM crew.crew_members WHERE user_id = $1 FOR UPDATE', [userId]);
    const { rows } = await client.query<{ t: string }>(
      `SELECT greatest(clock_timestamp(), record_updated_at + interval '1 microsecond')::text AS t
         FROM crew.crew_members WHERE user_id = $1`,
      [userId],
    );
    await work(client, rows[0].t);
    await client.query(
      `UPDATE crew.crew_members
          SET record_updated_at = $2, vessels_updated_at = CASE WHEN $3 THEN $2::timestamptz ELSE vessels_updated_at END
        WHERE user_id = $1`,
      [userId, rows[0].t, vessels],
    );
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/** Fictional ships with valid IMO check digits. */
const FACTORY_IMOS = ['9074729', '9321483', '9176187', '9387425', '9226906', '9461867', '9595321', '9704611'];
const PERIOD_ROLES = ['Master', 'Chief Officer', 'Second Officer'];

/**
 * Vessel period number `g` (1-based): periods go back from `newest` three days apart, two at a
 * time sharing a start (so the id decides their order), on `vessels` ships.
 */
export interface FactoryPeriod {
  readonly id: string;
  readonly imo: string;
  readonly name: string;
  readonly role: string;
  readonly period_start: string;
  readonly period_end: string;
  readonly days: number;
  readonly nautical_miles: number;
}

const DAY_MS = 86_400_000;

function factoryPeriod(userId: string, g: number, newest: Date, vessels: number): FactoryPeriod {
  const start = new Date(newest.getTime() - Math.floor(g / 2) * 3 * DAY_MS);
  return {
    id: `vp_${userId.slice(-12)}_${String(g).padStart(5, '0')}`,
    imo: FACTORY_IMOS[g % vessels],
    name: `Factory Vessel ${g % vessels}`,
    role: PERIOD_ROLES[g % PERIOD_ROLES.length],
    period_start: start.toISOString(),
    period_end: new Date(start.getTime() + 2 * DAY_MS).toISOString(),
    days: 2,
    nautical_miles: (g * 7) % 500,
  };
}

/** Adds periods 1..count (as factoryPeriod() describes them) in one INSERT, and returns them. */
export async function addVesselPeriods(
  db: Pool,
  userId: string,
  count: number,
  options: { readonly newest?: Date; readonly vessels?: number } = {},
): Promise<FactoryPeriod[]> {
  const newest = options.newest ?? new Date(Date.UTC(2025, 5, 1));
  const vessels = Math.min(options.vessels ?? FACTORY_IMOS.length, FACTORY_IMOS.length);
  const periods = Array.from({ length: count }, (_, i) => factoryPeriod(userId, i + 1, newest, vessels));
  await recordWrite(db, userId, true, async (client, writeTime) => {
    await client.query(
      `INSERT INTO crew.vessel_period_versions
         (period_id, version, user_id, imo, name, role, period_start, period_end, days, nautical_miles, valid_from)
       SELECT id, 1, $1, imo, name, role, period_start, period_end, days, nautical_miles, $3
         FROM json_to_recordset($2) AS p(id text, imo text, name text, role text, period_start timestamptz,
                                         period_end timestamptz, days int, nautical_miles int)`,
      [userId, JSON.stringify(periods), writeTime],
    );
  });
  return periods;
}

const ENTRY_ROLES = ['Master', 'Chief Officer', 'Second Officer', 'Deck Cadet'];

export interface FactoryEntry {
  readonly date: string;
  readonly days_at_sea: number;
  readonly nautical_miles: number;
  readonly role: string;
  readonly verified: boolean;
}

/** Entry number `g` (1-based): within the 730 days up to `today`. */
function factoryEntry(g: number, today: string): FactoryEntry {
  const date = new Date(Date.parse(`${today}T00:00:00Z`) - (g % 730) * DAY_MS);
  return {
    date: date.toISOString().slice(0, 10),
    days_at_sea: 1 + (g % 20),
    nautical_miles: (g * 37) % 1000,
    role: ENTRY_ROLES[g % ENTRY_ROLES.length],
    verified: g % 3 === 0,
  };
}

/** Adds sea-time entries 1..count (as factoryEntry() describes them) in one INSERT, and returns them. */
export async function addSeaTimeEntries(
  db: Pool,
  userId: string,
  count: number,
  today: string,
): Promise<FactoryEntry[]> {
  const entries = Array.from({ length: count }, (_, i) => factoryEntry(i + 1, today));
  const rows = entries.map((e, i) => ({ ...e, id: `ste_${userId.slice(-12)}_${i + 1}` }));
  await recordWrite(db, userId, false, async (client, writeTime) => {
    await client.query(
      `INSERT INTO crew.sea_time_entries (id, user_id, date, days_at_sea, nautical_miles, role, verified, created_at)
       SELECT id, $1, date, days_at_sea, nautical_miles, role, verified, $3
         FROM json_to_recordset($2) AS e(id text, date date, days_at_sea int, nautical_miles int, role text, verified boolean)`,
      [userId, JSON.stringify(rows), writeTime],
    );
  });
  return entries;
}

/** Today's date in UTC as PostgreSQL sees it (the clock crew-api's queries use). */
export async function databaseToday(db: Pool): Promise<string> {
  const { rows } = await db.query<{ d: string }>(
    `SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS d`,
  );
  return rows[0].d;
}

/** A row of crew-api's outbox, as the relay will publish it. */
export interface OutboxRow {
  readonly message_id: string;
  readonly exchange: string;
  readonly routing_key: string;
  readonly payload: ServiceEvent;
}

/** The outbox rows of one member's events, oldest first. */
export async function outboxEvents(db: Pool, userId: string): Promise<OutboxRow[]> {
  const { rows } = await db.query<OutboxRow>(
    `SELECT message_id, exchange, routing_key, payload FROM crew.outbox_messages
      WHERE payload->>'user_id' = $1 ORDER BY id`,
    [userId],
  );
  return rows;
}
