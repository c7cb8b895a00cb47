import { ValidationProblem } from '@svc/platform';
import { isSeatId, parseProvision, parseSeatListQuery } from './seat-requests.dto';

const NOW = new Date('2026-06-01T00:00:00Z');

function errorsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof ValidationProblem) return (err.extras.errors ?? []).map((e) => e.field);
    throw err;
  }
  throw new Error('expected a ValidationProblem');
}

describe('parseSeatListQuery', () => {
  it('defaults the limit to 50 and takes a status filter', () => {
    expect(parseSeatListQuery({})).toEqual({ status: undefined, limit: 50, cursor: undefined });
    expect(parseSeatListQuery({ status: 'active', limit: '200' })).toMatchObject({
      status: 'active',
      limit: 200,
    });
  });

  it.each([['0'], ['201'], ['1.5'], ['abc'], [['10', '20']]])('refuses limit %j', (limit) => {
    expect(errorsOf(() => parseSeatListQuery({ limit }))).toEqual(['limit']);
  });

  it('refuses an unknown status', () => {
    expect(errorsOf(() => parseSeatListQuery({ status: 'expired' }))).toEqual(['status']);
  });
});

describe('parseProvision', () => {
  it('normalises the e-mail and leaves the optional fields null', () => {
    expect(parseProvision({ email: '  Crew.Member@Example.COM ' }, NOW)).toEqual({
      email: 'crew.member@example.com',
      externalRef: null,
      expiresAt: null,
    });
  });

  it('takes external_ref and a future expires_at', () => {
    expect(
      parseProvision({ email: 'a@b.co', external_ref: 'emp-1', expires_at: '2027-01-01T00:00:00Z' }, NOW),
    ).toEqual({ email: 'a@b.co', externalRef: 'emp-1', expiresAt: new Date('2027-01-01T00:00:00Z') });
  });

  it('names every bad field at once', () => {
    expect(
      errorsOf(() => parseProvision({ email: 'nope', expires_at: '2020-01-01', colour: 'red' }, NOW)).sort(),
    ).toEqual(['colour', 'email', 'expires_at']);
  });

  it('refuses a term beyond ten years and one at the epoch', () => {
    expect(errorsOf(() => parseProvision({ email: 'a@b.co', expires_at: '2040-01-01' }, NOW))).toEqual([
      'expires_at',
    ]);
    expect(errorsOf(() => parseProvision({ email: 'a@b.co', expires_at: '1970-01-01' }, NOW))).toEqual([
      'expires_at',
    ]);
  });
});

describe('isSeatId', () => {
  it('knows a seat id from anything else', () => {
    expect(isSeatId('sps_abc-DEF_123')).toBe(true);
    expect(isSeatId('usr_abc')).toBe(false);
    expect(isSeatId('sps_')).toBe(false);
    expect(isSeatId("sps_x' OR 1=1")).toBe(false);
  });
});
