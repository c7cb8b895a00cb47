import { QueryRunnerAlreadyReleasedError, QueryRunnerProviderAlreadyReleasedError } from 'typeorm';
import { isDatabaseUnreachable } from './unreachable';

describe('isDatabaseUnreachable', () => {
  it('knows the errors of a database that went away', () => {
    expect(
      isDatabaseUnreachable(
        Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
      ),
    ).toBe(true);
    expect(
      isDatabaseUnreachable(
        Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
      ),
    ).toBe(true);
    expect(isDatabaseUnreachable(new Error('Connection terminated unexpectedly'))).toBe(true);
  });

  it('counts a statement on a transaction whose connection died (TypeORM released its runner)', () => {
    expect(isDatabaseUnreachable(new QueryRunnerAlreadyReleasedError())).toBe(true);
    expect(isDatabaseUnreachable(new QueryRunnerProviderAlreadyReleasedError())).toBe(true);
  });

  it('leaves bugs alone', () => {
    expect(isDatabaseUnreachable(new TypeError('x is undefined'))).toBe(false);
    expect(isDatabaseUnreachable(Object.assign(new Error('duplicate key'), { code: '23505' }))).toBe(false);
    expect(isDatabaseUnreachable(undefined)).toBe(false);
  });
});
