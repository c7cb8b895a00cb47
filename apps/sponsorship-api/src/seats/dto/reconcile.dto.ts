import { API_LIMITS, type FieldError } from '@svc/contracts';
import { FieldReader, ValidationProblem } from '@svc/platform';
import { SeatsException } from '../seats.exception';

/** A 422 names at most this many bad entries (the rest are counted in one more entry). */
const MAX_ENTRY_ERRORS = 20;

export interface ReconcileRequest {
  readonly activeRefs: string[];
  readonly apply: boolean;
  readonly maxCancel?: number;
  readonly overrideThreshold: boolean;
}

function entryErrors(refs: readonly unknown[]): FieldError[] {
  const errors: FieldError[] = [];
  let bad = 0;
  refs.forEach((ref, i) => {
    const ok = typeof ref === 'string' && ref.trim().length > 0 && ref.length <= API_LIMITS.refMaxLength;
    if (ok) return;
    bad += 1;
    if (errors.length < MAX_ENTRY_ERRORS) {
      errors.push({
        field: `active_refs[${i}]`,
        message: `must be a non-empty string of at most ${API_LIMITS.refMaxLength} characters`,
      });
    }
  });
  if (bad > errors.length) {
    errors.push({
      field: 'active_refs',
      message: `${bad - errors.length} more entries are invalid likewise`,
    });
  }
  return errors;
}

/** Reconcile; an empty `active_refs` is 400: it almost always means a failed export, and would cancel every seat. */
export function parseReconcile(body: unknown): ReconcileRequest {
  const reader = FieldReader.body(body).onlyFields([
    'active_refs',
    'apply',
    'max_cancel',
    'override_threshold',
  ]);
  const refs = (body as Record<string, unknown>).active_refs;
  const apply = reader.optionalBoolean('apply') ?? false;
  const maxCancel = reader.optionalInteger('max_cancel', 0, 1_000_000_000);
  const overrideThreshold = reader.optionalBoolean('override_threshold') ?? false;
  if (refs === undefined) reader.fail('active_refs', 'is required');
  else if (!Array.isArray(refs)) reader.fail('active_refs', 'must be an array of strings');
  else if (refs.length > API_LIMITS.reconcileMaxRefs)
    reader.fail('active_refs', `must have at most ${API_LIMITS.reconcileMaxRefs} entries`);
  reader.done();
  const list = refs as unknown[];
  if (list.length === 0) {
    throw new SeatsException(
      'empty_active_refs',
      '`active_refs` is empty. Reconcile compares your seats with your list of active members; an empty list would cancel every seat, so it is refused.',
    );
  }
  const errors = entryErrors(list);
  if (errors.length > 0) throw new ValidationProblem(errors);
  return { activeRefs: list as string[], apply, maxCancel, overrideThreshold };
}
