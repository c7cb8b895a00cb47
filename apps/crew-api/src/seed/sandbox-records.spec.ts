import { isValidImo } from '../vessels/imo';
import { sandboxRecords, SANDBOX_VESSELS } from './sandbox-records';

const now = new Date('2026-03-15T10:30:00Z');
const [alex, sam, jo] = sandboxRecords(now);
const DAY_MS = 86_400_000;

describe('sandbox crew records (docs/rules.md, Sandbox)', () => {
  it('uses ships with valid IMO numbers', () => {
    expect(SANDBOX_VESSELS.every((v) => isValidImo(v.imo))).toBe(true);
  });

  it('gives alex.morgan 120 periods on at least 8 vessels and 3 roles, none overlapping', () => {
    expect(alex.periods).toHaveLength(120);
    expect(new Set(alex.periods.map((p) => p.imo)).size).toBeGreaterThanOrEqual(8);
    expect(new Set(alex.periods.map((p) => p.role)).size).toBeGreaterThanOrEqual(3);
    for (let i = 1; i < alex.periods.length; i += 1) {
      expect(alex.periods[i].periodStart.getTime()).toBeGreaterThan(alex.periods[i - 1].periodEnd.getTime());
    }
    expect(alex.periods[119].periodEnd.getTime()).toBeLessThan(now.getTime());
    expect(new Set(alex.periods.map((p) => p.id)).size).toBe(120);
  });

  it('gives alex.morgan sea time in most of the last 12 months, with a verified subset', () => {
    const months = new Set<string>();
    for (let k = 0; k < 12; k += 1) {
      months.add(new Date(Date.UTC(2026, 2 - k, 1)).toISOString().slice(0, 7));
    }
    const withData = new Set(alex.entries.map((e) => e.date.slice(0, 7)).filter((m) => months.has(m)));
    expect(withData.size).toBeGreaterThanOrEqual(9);
    expect(alex.entries.some((e) => e.verified)).toBe(true);
    expect(alex.entries.some((e) => !e.verified)).toBe(true);
    expect(new Set(alex.entries.map((e) => e.id)).size).toBe(alex.entries.length);
  });

  it('splits each period into monthly entries that add up to it', () => {
    const days = alex.entries.reduce((n, e) => n + e.daysAtSea, 0);
    expect(days).toBe(alex.periods.reduce((n, p) => n + p.days, 0));
    for (const p of alex.periods)
      expect(p.days).toBe(Math.round((p.periodEnd.getTime() - p.periodStart.getTime()) / DAY_MS));
  });

  it("sponsors alex.morgan through sandbox-partner's seat until the end of next year", () => {
    expect(alex.membership).toMatchObject({
      tier: 'premium',
      source: 'sponsored',
      sponsorClientId: 'sandbox-partner',
      sponsorshipId: 'sps_sandbox_alex_morgan',
    });
    expect(alex.membership.expiresAt?.toISOString()).toBe('2027-12-31T23:59:59.000Z');
  });

  it('gives sam.lee 3 periods and self-paid premium, jo.kim an empty free record', () => {
    expect(sam.periods).toHaveLength(3);
    expect(sam.membership).toMatchObject({ tier: 'premium', source: 'self', sponsorClientId: null });
    expect(jo.periods).toHaveLength(0);
    expect(jo.entries).toHaveLength(0);
    expect(jo.membership).toMatchObject({ tier: 'free', source: 'self' });
  });

  it('is the same on every run with the same clock (deterministic ids)', () => {
    expect(sandboxRecords(now)[0].periods.map((p) => p.id)).toEqual(alex.periods.map((p) => p.id));
  });
});
