import { ValidationProblem } from '@svc/platform';
import { FieldReader, isCalendarDate, parseTimestamp } from './field-reader';

function errorsOf(fn: () => unknown): { field: string; message: string }[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof ValidationProblem) return [...(err.extras.errors ?? [])];
    throw err;
  }
  return [];
}

describe('isCalendarDate', () => {
  it.each(['2024-02-29', '2025-12-31', '1900-01-01'])('accepts %s', (d) =>
    expect(isCalendarDate(d)).toBe(true),
  );
  it.each(['2023-02-29', '2024-02-30', '2024-13-01', '2024-1-1', '20240101', ''])('refuses %p', (d) =>
    expect(isCalendarDate(d)).toBe(false),
  );
});

describe('parseTimestamp', () => {
  it('reads Z, offsets, fractions and bare dates', () => {
    expect(parseTimestamp('2025-03-01T10:00:00Z')?.toISOString()).toBe('2025-03-01T10:00:00.000Z');
    expect(parseTimestamp('2025-03-01T12:00+02:00')?.toISOString()).toBe('2025-03-01T10:00:00.000Z');
    expect(parseTimestamp('2025-03-01T10:00:00.123456Z')?.toISOString()).toBe('2025-03-01T10:00:00.123Z');
    expect(parseTimestamp('2025-03-01')?.toISOString()).toBe('2025-03-01T00:00:00.000Z');
  });

  it.each(['2025-03-01T10:00:00', '2025-02-30T00:00:00Z', '2025-03-01T24:00:00Z', 'yesterday', '1741000000'])(
    'refuses %p',
    (t) => expect(parseTimestamp(t)).toBeUndefined(),
  );
});

describe('FieldReader', () => {
  it('refuses a body that is not an object with one error on body', () => {
    for (const body of [undefined, null, [], 'text', 3]) {
      expect(errorsOf(() => FieldReader.body(body))).toEqual([
        { field: 'body', message: 'must be a JSON object' },
      ]);
    }
  });

  it('collects every failing field before throwing', () => {
    const errors = errorsOf(() => {
      const r = FieldReader.body({ a: 1, b: '', c: 'x', extra: true }).onlyFields(['a', 'b', 'c', 'd']);
      r.string('a', { max: 5 });
      r.string('b', { max: 5 });
      r.integer('c', 0, 3);
      r.boolean('d');
      r.done();
    });
    expect(errors.map((e) => e.field)).toEqual(['extra', 'a', 'b', 'c', 'd']);
    expect(errors.find((e) => e.field === 'd')?.message).toBe('is required');
  });

  it('refuses a string holding a NUL, which no record can store', () => {
    const errors = errorsOf(() => {
      const r = FieldReader.body({ external_ref: 'emp\u00001' });
      r.string('external_ref', { max: 320 });
      r.done();
    });
    expect(errors).toEqual([{ field: 'external_ref', message: 'must not contain a NUL character' }]);
  });

  it('trims strings and passes valid input', () => {
    const r = FieldReader.body({ name: '  Kari ' });
    expect(r.string('name', { max: 10 })).toBe('Kari');
    expect(() => r.done()).not.toThrow();
  });

  it('reads query integers strictly', () => {
    const read = (limit: unknown) =>
      errorsOf(() => {
        const r = FieldReader.query({ limit });
        r.queryInteger('limit', 1, 200);
        r.done();
      });
    expect(read('200')).toEqual([]);
    for (const bad of ['0', '201', '1.0', ' 5', '5a', ['5', '6']]) expect(read(bad)).toHaveLength(1);
  });
});
