import { ValidationProblem } from '@svc/platform';
import { parseMemberLeft } from './member-left.dto';

describe('parseMemberLeft', () => {
  it('takes user_id, external_ref and reason, each optional or null', () => {
    expect(parseMemberLeft({ user_id: 'usr_1', reason: 'account_deleted' })).toEqual({
      userId: 'usr_1',
      externalRef: null,
      reason: 'account_deleted',
    });
    expect(parseMemberLeft({ user_id: null, external_ref: 'emp-9', reason: null })).toEqual({
      userId: null,
      externalRef: 'emp-9',
      reason: null,
    });
    expect(parseMemberLeft({})).toEqual({ userId: null, externalRef: null, reason: null });
  });

  it.each([
    ['an unknown reason', { user_id: 'usr_1', reason: 'fired' }],
    ['a number user_id', { user_id: 7 }],
    ['an unknown field', { user_id: 'usr_1', email: 'a@b.co' }],
    ['a body that is not an object', ['usr_1']],
  ])('answers 422 for %s', (_what, body) => {
    expect(() => parseMemberLeft(body)).toThrow(ValidationProblem);
  });
});
