import { ContractViolation } from '../rpc';
import { CREW_MEMBERSHIP_GRANT } from '../crew/membership';
import { ACCESS_READS_MAX_COUNT, AUTH_ACCESS_READS_RECORD, isRecentReadDay } from './access-history';

const DAY_MS = 86_400_000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const count = (day: string, n: number) => ({
  user_id: 'usr_1',
  client_id: 'partner-1',
  scope: 'profile:read',
  day,
  count: n,
  last_at: new Date().toISOString(),
});

describe('auth.access-reads.record', () => {
  it("takes today's and yesterday's counts up to one flush interval's reads", () => {
    const counts = [count(dayOf(Date.now()), ACCESS_READS_MAX_COUNT), count(dayOf(Date.now() - DAY_MS), 1)];
    expect(AUTH_ACCESS_READS_RECORD.parseRequest({ counts }).counts).toHaveLength(2);
    expect(ACCESS_READS_MAX_COUNT).toBe(1_000_000);
  });

  it.each([
    ['a day in 2099', count('2099-01-01', 1)],
    ['the day before yesterday', count(dayOf(Date.now() - 2 * DAY_MS), 1)],
    ['tomorrow', count(dayOf(Date.now() + DAY_MS), 1)],
    ['3,000,000,000 reads', count(dayOf(Date.now()), 3_000_000_000)],
    ['one read more than a flush interval can make', count(dayOf(Date.now()), ACCESS_READS_MAX_COUNT + 1)],
  ])('refuses %s', (_what, bad) => {
    expect(() => AUTH_ACCESS_READS_RECORD.parseRequest({ counts: [bad] })).toThrow(ContractViolation);
  });

  it('knows today and yesterday by UTC day', () => {
    const now = Date.parse('2026-03-01T00:00:30Z');
    expect(isRecentReadDay('2026-03-01', now)).toBe(true);
    expect(isRecentReadDay('2026-02-28', now)).toBe(true);
    expect(isRecentReadDay('2026-02-27', now)).toBe(false);
    expect(isRecentReadDay('2026-03-02', now)).toBe(false);
  });
});

describe('crew.membership.grant', () => {
  const grant = (expires: Date) => ({
    expires_at: expires.toISOString(),
    user_id: 'usr_1',
    sponsor_client_id: 'partner-1',
    sponsorship_id: 'sp_1',
  });

  it('takes a term within the longest a partner may ask for, and refuses one beyond it', () => {
    expect(() =>
      CREW_MEMBERSHIP_GRANT.parseRequest(grant(new Date(Date.now() + 365 * DAY_MS))),
    ).not.toThrow();
    expect(() => CREW_MEMBERSHIP_GRANT.parseRequest(grant(new Date('2099-01-01T00:00:00Z')))).toThrow(
      ContractViolation,
    );
  });
});
