import { API_LIMITS } from '@svc/contracts';
import { ValidationProblem } from '@svc/platform';
import { cancelCeiling } from '../reconcile.service';
import { SeatsException } from '../seats.exception';
import { parseReconcile } from './reconcile.dto';

describe('parseReconcile', () => {
  it('is a dry run unless apply is true', () => {
    expect(parseReconcile({ active_refs: ['a@b.co'] })).toEqual({
      activeRefs: ['a@b.co'],
      apply: false,
      maxCancel: undefined,
      overrideThreshold: false,
    });
  });

  it('refuses an empty list with the 400 of the interface', () => {
    expect(() => parseReconcile({ active_refs: [] })).toThrow(SeatsException);
  });

  it.each([
    ['a missing list', {}],
    ['a list that is not an array', { active_refs: 'a@b.co' }],
    ['a negative max_cancel', { active_refs: ['x'], max_cancel: -1 }],
    ['an unknown field', { active_refs: ['x'], dry_run: true }],
    ['an empty entry', { active_refs: ['x', '  '] }],
    ['an entry too long', { active_refs: ['x'.repeat(321)] }],
    ['a number entry', { active_refs: [42] }],
    [
      'too many entries',
      { active_refs: Array.from({ length: API_LIMITS.reconcileMaxRefs + 1 }, (_, i) => `r${i}`) },
    ],
  ])('answers 422 for %s', (_what, body) => {
    expect(() => parseReconcile(body)).toThrow(ValidationProblem);
  });

  it('names a bounded number of bad entries', () => {
    try {
      parseReconcile({ active_refs: Array.from({ length: 100 }, () => '') });
      throw new Error('expected a 422');
    } catch (err) {
      const errors = (err as ValidationProblem).extras.errors ?? [];
      expect(errors).toHaveLength(21);
      expect(errors[0].field).toBe('active_refs[0]');
      expect(errors[20].message).toMatch(/80 more/);
    }
  });
});

describe('cancelCeiling (the guard of docs/rules.md)', () => {
  it('is max_cancel when given, 0 included', () => {
    expect(cancelCeiling(1000, 0)).toBe(0);
    expect(cancelCeiling(1000, 7)).toBe(7);
  });

  it('is otherwise max(1, ceil(10 % of the live seats))', () => {
    expect(cancelCeiling(0, undefined)).toBe(1);
    expect(cancelCeiling(5, undefined)).toBe(1);
    expect(cancelCeiling(11, undefined)).toBe(2);
    expect(cancelCeiling(100, undefined)).toBe(10);
    expect(cancelCeiling(101, undefined)).toBe(11);
  });
});
