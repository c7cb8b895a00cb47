import type { Sql } from '@svc/platform';
import { DeliveriesRepository, type AttemptRecord } from './deliveries.repository';

/** The `reached` column of each record-attempts statement: which attempts count for health. */
function setup() {
  const judged: boolean[][] = [];
  const sql = {
    prepared: (_name: string, _text: string, values: unknown[]) => {
      judged.push(values[11] as boolean[]);
      return Promise.resolve((values[0] as string[]).map((deliveryId) => ({ deliveryId })));
    },
  } as unknown as Sql;
  const repository = new DeliveriesRepository(sql, { WEBHOOK_DISABLE_AFTER: 5 * 86_400_000 });
  return { repository, judged };
}

const attempt = (n: number, ok: boolean, clientId = 'p1'): AttemptRecord => ({
  deliveryId: `dlv_${clientId}_${n}`,
  clientId,
  attempt: 1,
  startedAt: new Date(),
  durationMs: 3,
  statusCode: ok ? 204 : 503,
  error: ok ? null : 'HTTP 503',
  nextAttemptAt: null,
  responseBody: '',
  targetUrl: 'https://p1.example/hook',
  status: ok ? 'delivered' : 'failed',
  giveUpReason: ok ? null : 'attempts_exhausted',
  reached: true,
  ok,
});

describe('DeliveriesRepository: what goes into an endpoint’s health', () => {
  it('writes every failure, the first success after one, and a healthy endpoint’s successes at most once a second', async () => {
    const { repository, judged } = setup();
    await repository.recordAttempt(attempt(1, true));
    await repository.recordAttempt(attempt(2, true));
    await repository.recordAttempt(attempt(3, true, 'p2'));
    await repository.recordAttempt(attempt(4, false));
    await repository.recordAttempt(attempt(5, false));
    await repository.recordAttempt(attempt(6, true));
    expect(judged).toEqual([[true], [false], [true], [true], [true], [true]]);
  });

  it('leaves out an attempt that sent nothing (the partner no longer a recipient)', async () => {
    const { repository, judged } = setup();
    await repository.recordAttempt({ ...attempt(1, false), reached: false, statusCode: null });
    expect(judged).toEqual([[false]]);
  });
});
