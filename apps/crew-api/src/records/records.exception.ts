import { DomainException } from '@svc/platform';

/** What can go wrong with a crew record, without HTTP: the problem mapper decides the answer. */
export type RecordsErrorCode =
  'member_not_found' | 'member_exists' | 'period_not_found' | 'invalid_cursor' | 'invalid_period';

export class RecordsException extends DomainException<RecordsErrorCode> {}

/** The caller's member has no crew record (a sign-in identity without one, or an unknown id). */
export function noCrewRecord(userId: string): RecordsException {
  return new RecordsException('member_not_found', `There is no crew record for ${userId}.`);
}
