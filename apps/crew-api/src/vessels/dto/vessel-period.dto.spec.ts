import { ValidationProblem } from '@svc/platform';
import { parseNewVesselPeriod, parseVesselPeriodPatch, spanDays } from './vessel-period.dto';

const valid = {
  imo: 'IMO 9074729',
  name: 'Nordic Aurora',
  role: 'Master',
  period_start: '2025-03-01T00:00:00Z',
  period_end: '2025-03-31T12:00:00Z',
  nautical_miles: 4200,
};

const fieldsOf = (parse: (b: unknown) => unknown, body: unknown) => {
  try {
    parse(body);
    return [];
  } catch (err) {
    return err instanceof ValidationProblem ? (err.extras.errors ?? []).map((e) => e.field) : ['thrown'];
  }
};

describe('parseNewVesselPeriod', () => {
  it('normalises the IMO number and defaults days to the span, rounded up', () => {
    const period = parseNewVesselPeriod(valid);
    expect(period.imo).toBe('9074729');
    expect(period.days).toBe(31);
    expect(parseNewVesselPeriod({ ...valid, days: 12 }).days).toBe(12);
  });

  it('refuses an end before the start, on period_end', () => {
    expect(fieldsOf(parseNewVesselPeriod, { ...valid, period_end: '2025-02-01' })).toEqual(['period_end']);
  });

  it('refuses a wrong check digit', () => {
    expect(fieldsOf(parseNewVesselPeriod, { ...valid, imo: '9074728' })).toEqual(['imo']);
  });

  it('names every missing field', () => {
    expect(fieldsOf(parseNewVesselPeriod, {})).toEqual([
      'imo',
      'name',
      'role',
      'period_start',
      'period_end',
      'nautical_miles',
    ]);
  });
});

describe('parseVesselPeriodPatch', () => {
  it('takes any subset, and needs one field', () => {
    expect(parseVesselPeriodPatch({ role: 'Bosun' })).toEqual(expect.objectContaining({ role: 'Bosun' }));
    expect(fieldsOf(parseVesselPeriodPatch, {})).toEqual(['body']);
    expect(fieldsOf(parseVesselPeriodPatch, { version: 2 })).toEqual(['version', 'body']);
  });
});

describe('spanDays', () => {
  it('counts started days', () => {
    expect(spanDays(new Date('2025-01-01T00:00:00Z'), new Date('2025-01-01T00:00:00Z'))).toBe(0);
    expect(spanDays(new Date('2025-01-01T00:00:00Z'), new Date('2025-01-02T00:00:00Z'))).toBe(1);
    expect(spanDays(new Date('2025-01-01T00:00:00Z'), new Date('2025-01-02T00:00:01Z'))).toBe(2);
  });
});
