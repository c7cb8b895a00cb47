import { toProblem } from './problem-response';
import { RouteIndex } from './route-index';

const ctx = { method: 'POST', path: '/oauth/token', requestId: 'req_1' };

describe('toProblem', () => {
  it('answers a NUL that PostgreSQL refused (22021) with 400 bad_request, not a logged 500', () => {
    const refused = Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), {
      code: '22021',
    });
    const { problem, logAsError } = toProblem(refused, ctx, new RouteIndex());
    expect(problem.code).toBe('bad_request');
    expect(problem.status).toBe(400);
    expect(logAsError).toBe(false);
  });

  it('still answers an error nobody anticipated with a logged 500', () => {
    const { problem, logAsError } = toProblem(new Error('impossible row'), ctx, new RouteIndex());
    expect(problem.code).toBe('internal_error');
    expect(logAsError).toBe(true);
  });
});
