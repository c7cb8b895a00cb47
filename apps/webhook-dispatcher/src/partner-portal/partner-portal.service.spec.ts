import { ApiProblem, ValidationProblem } from '@svc/platform';
import { toPortalProblem } from './partner-portal.service';

describe('toPortalProblem: the API’s answer, carried to the portal', () => {
  it('keeps the status, code and detail, and the Retry-After of a 429 in seconds', () => {
    expect(
      toPortalProblem(
        new ApiProblem('rate_limit_exceeded', 'retry after 42 seconds', { headers: { 'retry-after': '42' } }),
      ),
    ).toEqual({
      status: 429,
      code: 'rate_limit_exceeded',
      detail: 'retry after 42 seconds',
      retry_after: 42,
    });
    expect(toPortalProblem(new ApiProblem('conflict', 'still being attempted'))).toEqual({
      status: 409,
      code: 'conflict',
      detail: 'still being attempted',
    });
  });

  it('keeps a 422’s field errors', () => {
    const problem = toPortalProblem(
      new ValidationProblem([{ field: 'until', message: 'must be at most 7 days after since' }]),
    );
    expect(problem).toMatchObject({
      status: 422,
      code: 'invalid_request',
      errors: [{ field: 'until', message: 'must be at most 7 days after since' }],
    });
  });
});
