import { ValidationProblem } from '@svc/platform';
import { parseReplay } from './delivery-requests.dto';

const window = { since: '2026-03-01T00:00:00Z', until: '2026-03-02T00:00:00Z' };

describe('parseReplay: finished deliveries only', () => {
  it.each(['delivered', 'given_up', 'skipped'])('takes %s', (status) => {
    expect(parseReplay({ ...window, status }).status).toBe(status);
  });

  it('refuses `failed` (still being retried: a replay would double its attempt series) with a 422', () => {
    expect(() => parseReplay({ ...window, status: 'failed' })).toThrow(ValidationProblem);
    expect(() => parseReplay({ ...window, status: 'pending' })).toThrow(ValidationProblem);
  });
});
