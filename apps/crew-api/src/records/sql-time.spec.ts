import { instant, usToMs } from './sql-time';

describe('instant', () => {
  it('reads the text of a UTC timestamp, with or without a fraction', () => {
    expect(instant('2026-01-31 12:00:00')).toEqual({
      iso: '2026-01-31T12:00:00.000Z',
      exact: '2026-01-31T12:00:00.000000Z',
    });
    expect(instant('2026-01-31 12:00:00.1234')).toEqual({
      iso: '2026-01-31T12:00:00.123Z',
      exact: '2026-01-31T12:00:00.123400Z',
    });
    expect(instant('2026-01-31 12:00:00.999999').iso).toBe('2026-01-31T12:00:00.999Z');
  });

  it('refuses any other DateStyle', () => {
    expect(() => instant('01/31/2026 12:00:00')).toThrow(/DateStyle/);
    expect(() => instant('Sat Jan 31 12:00:00 2026')).toThrow(/DateStyle/);
  });

  it('truncates exact instants to milliseconds like Date#toISOString', () => {
    expect(usToMs('2026-01-31T12:00:00.123999Z')).toBe('2026-01-31T12:00:00.123Z');
  });
});
