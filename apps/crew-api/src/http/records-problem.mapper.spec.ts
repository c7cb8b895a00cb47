import { RecordsException } from '../records/records.exception';
import { recordsProblem } from './records-problem.mapper';

describe('recordsProblem', () => {
  it('maps every record error to its Problem', () => {
    expect(recordsProblem(new RecordsException('member_not_found', 'x'))).toMatchObject({
      code: 'not_found',
    });
    expect(recordsProblem(new RecordsException('period_not_found', 'x'))).toMatchObject({
      code: 'not_found',
    });
    expect(recordsProblem(new RecordsException('invalid_cursor', 'bad'))).toMatchObject({
      code: 'invalid_request',
      extras: { errors: [{ field: 'cursor', message: 'bad' }] },
    });
    expect(recordsProblem(new RecordsException('invalid_period', 'bad'))).toMatchObject({
      code: 'invalid_request',
      extras: { errors: [{ field: 'period_end', message: 'bad' }] },
    });
  });

  it('leaves other errors alone', () => {
    expect(recordsProblem(new Error('boom'))).toBeUndefined();
  });
});
