import type { FieldSpecs } from '@svc/contracts';
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

  it('refuses a string holding a lone surrogate (it would be stored as U+FFFD), keeps paired ones', () => {
    const read = (value: string) =>
      errorsOf(() => {
        const r = FieldReader.body({ ref: value });
        r.string('ref', { max: 320 });
        r.done();
      });
    const refused = [{ field: 'ref', message: 'must be Unicode text (it holds a lone surrogate)' }];
    for (const lone of ['a\ud800', '\udcffa', 'a\udc00\ud800b']) expect(read(lone)).toEqual(refused);
    expect(read('ship \u{1F6A2} ahoy')).toEqual([]);
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

  it('reads a declared body: only its fields, null for absent nullable ones, each rule with its message', () => {
    const specs = {
      email: { type: 'string', required: true, format: 'email', maxLength: 320 },
      ref: { type: 'string', nullable: true, minLength: 1, maxLength: 3 },
      reason: { type: 'string', nullable: true, enum: ['a', 'b'] },
      at: { type: 'timestamp', nullable: true },
    } as const satisfies FieldSpecs;
    const read = (body: Record<string, unknown>) => {
      const r = FieldReader.body(body);
      const values = r.fields(specs);
      r.done();
      return values;
    };
    expect(read({ email: ' x@y.co ', reason: 'b' })).toEqual({
      email: 'x@y.co',
      ref: null,
      reason: 'b',
      at: null,
    });
    expect(errorsOf(() => read({ email: 'x@y', ref: 'long', reason: 'c', at: 'soon', other: 1 }))).toEqual([
      { field: 'other', message: 'is not a field of this request; expected email, ref, reason, at' },
      { field: 'email', message: 'must be an e-mail address' },
      { field: 'ref', message: 'must be 1-3 characters long' },
      { field: 'reason', message: 'must be one of a, b, or null' },
      { field: 'at', message: 'must be an ISO 8601 timestamp with Z or an offset, or a date' },
    ]);
  });

  it('reads a declared query: other parameters ignored, an enum checked after its length', () => {
    const specs = {
      status: { type: 'string', maxLength: 5, enum: ['on', 'off'] },
      limit: { type: 'integer', minimum: 1, maximum: 9, default: 5 },
    } as const satisfies FieldSpecs;
    const read = (query: Record<string, unknown>) => {
      const r = FieldReader.query(query);
      const values = r.fields(specs);
      r.done();
      return values;
    };
    expect(read({ status: 'on', cache: '1' })).toEqual({ status: 'on', limit: undefined });
    expect(errorsOf(() => read({ status: 'toolong', limit: '10' }))).toEqual([
      { field: 'status', message: 'must be given once, 1-5 characters long' },
      { field: 'limit', message: 'must be an integer from 1 to 9' },
    ]);
    expect(errorsOf(() => read({ status: 'up' }))).toEqual([
      { field: 'status', message: 'must be one of on, off' },
    ]);
  });
});
