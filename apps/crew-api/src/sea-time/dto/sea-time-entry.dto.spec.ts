import { ValidationProblem } from '@svc/platform';
import { parseSeaTimeEntry } from './sea-time-entry.dto';

const now = Date.parse('2026-03-15T23:00:00Z');
const valid = { date: '2026-03-15', days_at_sea: 10, nautical_miles: 1500, role: 'Master' };

const fieldsOf = (body: unknown) => {
  try {
    parseSeaTimeEntry(body, now);
    return [];
  } catch (err) {
    return err instanceof ValidationProblem ? (err.extras.errors ?? []).map((e) => e.field) : ['thrown'];
  }
};

describe('parseSeaTimeEntry', () => {
  it('reads an entry, verified false by default', () => {
    expect(parseSeaTimeEntry(valid, now)).toEqual({
      date: '2026-03-15',
      daysAtSea: 10,
      nauticalMiles: 1500,
      role: 'Master',
      verified: false,
    });
    expect(parseSeaTimeEntry({ ...valid, verified: true }, now).verified).toBe(true);
  });

  it('allows tomorrow (UTC) for members east of UTC, not later', () => {
    expect(fieldsOf({ ...valid, date: '2026-03-16' })).toEqual([]);
    expect(fieldsOf({ ...valid, date: '2026-03-17' })).toEqual(['date']);
    expect(fieldsOf({ ...valid, date: '1899-12-31' })).toEqual(['date']);
  });

  it('names every bad field', () => {
    expect(
      fieldsOf({ date: '2026-02-29', days_at_sea: 367, nautical_miles: -1, role: '', verified: 1 }),
    ).toEqual(['date', 'days_at_sea', 'nautical_miles', 'role', 'verified']);
  });
});
