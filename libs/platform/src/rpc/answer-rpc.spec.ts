import { RpcException } from '@nestjs/microservices';
import { ContractViolation } from '@svc/contracts';
import { DependencyUnavailableError } from '../http/problem';
import { answerRpc } from './answer-rpc';

async function failureOf(work: () => Promise<unknown>): Promise<unknown> {
  try {
    await answerRpc(work);
  } catch (err) {
    return err;
  }
  throw new Error('the handler did not fail');
}

const errorOf = (err: unknown) => (err instanceof RpcException ? err.getError() : undefined);

describe('answerRpc', () => {
  it('passes the answer through', async () => {
    await expect(answerRpc(() => Promise.resolve({ ok: true }))).resolves.toEqual({ ok: true });
  });

  it('answers a malformed request with invalid_request', async () => {
    const err = await failureOf(() =>
      Promise.reject(new ContractViolation('auth.login', 'email must be a string')),
    );
    expect(errorOf(err)).toMatchObject({ error: 'invalid_request' });
  });

  it.each([
    ['a dependency declared unavailable', new DependencyUnavailableError('redis', new Error('down'))],
    // pg-pool, when every connection stayed busy past connectionTimeoutMillis (seen under a
    // burst of sign-ins): the caller should retry, it is not a bug.
    ['an exhausted database pool', new Error('timeout exceeded when trying to connect')],
    [
      'a refused database connection',
      Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
    ],
    ['a database shutting down', Object.assign(new Error('terminating connection'), { code: '57P01' })],
  ])('answers %s with temporarily_unavailable', async (_what, error) => {
    expect(errorOf(await failureOf(() => Promise.reject(error)))).toMatchObject({
      error: 'temporarily_unavailable',
    });
  });

  it('leaves any other failure a plain failure (logged as a bug by the caller)', async () => {
    const bug = new TypeError('undefined is not a function');
    await expect(failureOf(() => Promise.reject(bug))).resolves.toBe(bug);
  });
});
