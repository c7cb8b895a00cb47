import { createHash } from 'node:crypto';
import { DAY_MS, SANDBOX_MEMBERS, SANDBOX_SEATS, sandboxSeatExpiry } from '@svc/contracts';
import type { CrewMember } from '../members/crew-member.entity';
import type { Membership } from '../members/membership.entity';
import type { SeaTimeEntry } from '../sea-time/sea-time-entry.entity';
import type { PeriodVersion } from '../vessels/vessel-period-version.entity';
import { imoCheckDigit } from '../vessels/imo';

/** The sandbox crew records, generated (deterministically) around `now`. */
export type SeedPeriod = Omit<PeriodVersion, 'version' | 'userId' | 'validFrom'>;

export type SeedEntry = Omit<SeaTimeEntry, 'userId' | 'createdAt'>;

export interface SeedMember extends Omit<CrewMember, 'recordUpdatedAt'> {
  readonly membership: Omit<Membership, 'userId' | 'droppedSponsorshipId'>;
  readonly periods: readonly SeedPeriod[];
  readonly entries: readonly SeedEntry[];
}

/** Entries older than this are verified; the newest ones still wait for confirmation. */
const VERIFIED_AFTER_DAYS = 90;

/** Fictional ships with well-formed IMO numbers (six digits + check digit). */
export const SANDBOX_VESSELS = [
  ['931214', 'Nordic Aurora'],
  ['924578', 'Atlantic Meridian'],
  ['945012', 'Cape Fortitude'],
  ['918833', 'Baltic Horizon'],
  ['937706', 'Pacific Endeavour'],
  ['952341', 'Sea Kestrel'],
  ['908127', 'Polar Wren'],
  ['961450', 'Harbour Spirit'],
  ['972218', 'Coral Voyager'],
  ['915670', 'Stella Maris'],
].map(([six, name]) => ({ imo: `${six}${imoCheckDigit(six)}`, name }));

const ALEX_ROLES = ['Deck Cadet', 'Third Officer', 'Second Officer', 'Chief Officer'];

/** A deterministic id with the look of a random one: the same on every seed, so nothing doubles. */
function seededId(prefix: 'vp' | 'ste', key: string): string {
  return `${prefix}_${createHash('sha256').update(`sandbox:${key}`).digest('base64url').slice(0, 20)}`;
}

/** mulberry32: a small fixed-seed generator, so every sandbox gets the same career shape. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function utcDay(date: Date): Date {
  return new Date(Math.floor(date.getTime() / DAY_MS) * DAY_MS);
}

const ymd = (date: Date) => date.toISOString().slice(0, 10);

/** A period's entries, one per month it touches (that month's days and share of miles), dated its last day there. */
function entriesOf(memberKey: string, index: number, p: SeedPeriod, now: Date): SeedEntry[] {
  const entries: SeedEntry[] = [];
  let from = p.periodStart;
  while (from < p.periodEnd) {
    const monthEnd = new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth() + 1, 1));
    const to = monthEnd < p.periodEnd ? monthEnd : p.periodEnd;
    const days = Math.round((to.getTime() - from.getTime()) / DAY_MS);
    const lastDay = new Date(to.getTime() - DAY_MS);
    entries.push({
      id: seededId('ste', `${memberKey}:${index}:${ymd(from).slice(0, 7)}`),
      date: ymd(lastDay),
      daysAtSea: days,
      nauticalMiles: p.days === 0 ? 0 : Math.round((p.nauticalMiles * days) / p.days),
      role: p.role,
      verified: now.getTime() - lastDay.getTime() > VERIFIED_AFTER_DAYS * DAY_MS,
    });
    from = to;
  }
  return entries;
}

/** `count` periods built backwards from `now`: 20-60 days aboard, 3-15 ashore, one long leave. */
function career(
  memberKey: string,
  count: number,
  now: Date,
  pick: (index: number) => { vessel: number; role: string },
  seed: number,
  longLeaveBefore?: number,
): { periods: SeedPeriod[]; entries: SeedEntry[] } {
  const rand = random(seed);
  const periods: SeedPeriod[] = [];
  let end = new Date(utcDay(now).getTime() - 3 * DAY_MS);
  for (let i = count - 1; i >= 0; i -= 1) {
    const days = 20 + Math.floor(rand() * 41);
    const start = new Date(end.getTime() - days * DAY_MS);
    const { vessel, role } = pick(i);
    const ship = SANDBOX_VESSELS[vessel % SANDBOX_VESSELS.length];
    periods.push({
      id: seededId('vp', `${memberKey}:${i}`),
      imo: ship.imo,
      name: ship.name,
      role,
      periodStart: start,
      periodEnd: end,
      days,
      nauticalMiles: Math.round(days * (140 + rand() * 160)),
    });
    const ashore = i === longLeaveBefore ? 50 : 3 + Math.floor(rand() * 13);
    end = new Date(start.getTime() - ashore * DAY_MS);
  }
  periods.reverse();
  return { periods, entries: periods.flatMap((p, i) => entriesOf(memberKey, i, p, now)) };
}

function member(email: string) {
  const found = SANDBOX_MEMBERS.find((m) => m.email === email);
  if (!found) throw new Error(`no sandbox member ${email}`);
  return { userId: found.user_id, email: found.email, name: found.name };
}

/** A membership the member holds on their own. */
function selfPaid(tier: 'free' | 'premium', since: Date): SeedMember['membership'] {
  return { tier, source: 'self', since, sponsorClientId: null, sponsorshipId: null, expiresAt: null };
}

export function sandboxRecords(now: Date): SeedMember[] {
  const alex = member('alex.morgan@sandbox.test');
  const sam = member('sam.lee@sandbox.test');
  const jo = member('jo.kim@sandbox.test');
  const alexSeat = SANDBOX_SEATS.find((s) => s.user_id === alex.userId);
  if (!alexSeat) throw new Error(`no sandbox seat of ${alex.userId}`);
  const twoYearsAgo = new Date(now);
  twoYearsAgo.setUTCFullYear(now.getUTCFullYear() - 2);

  return [
    {
      ...alex,
      role: 'Chief Officer',
      country: 'GB',
      photoUrl: 'https://sandbox.example/photos/alex-morgan.jpg',
      membership: {
        tier: 'premium',
        source: 'sponsored',
        since: now,
        sponsorClientId: alexSeat.client_id,
        sponsorshipId: alexSeat.sponsorship_id,
        expiresAt: sandboxSeatExpiry(now),
      },
      // 120 periods, 12 on each of 10 ships, in four ranks of 30; one long leave in the last year.
      ...career(
        'alex',
        120,
        now,
        (i) => ({ vessel: Math.floor(i / 12), role: ALEX_ROLES[Math.floor(i / 30)] }),
        20_240_601,
        115,
      ),
    },
    {
      ...sam,
      role: 'Second Engineer',
      country: 'SG',
      photoUrl: null,
      membership: selfPaid('premium', twoYearsAgo),
      ...career('sam', 3, now, (i) => ({ vessel: i === 2 ? 4 : 7, role: 'Second Engineer' }), 20_240_602),
    },
    {
      ...jo,
      role: 'Deck Cadet',
      country: 'KR',
      photoUrl: null,
      membership: selfPaid('free', now),
      periods: [],
      entries: [],
    },
  ];
}
