import { RpcException } from '@nestjs/microservices';
import { ContractViolation } from '@svc/contracts';
import { answerAuthRpc } from './rpc-errors';
import { WebhooksException } from './webhooks/webhooks.exception';

async function rejection(work: () => Promise<unknown>): Promise<unknown> {
  return answerAuthRpc(work).then(
    () => 'answered',
    (err: unknown) => err,
  );
}

describe('answerAuthRpc', () => {
  it('answers the dispatcher-only refusal as access_denied with its message', async () => {
    const err = await rejection(() => Promise.reject(new WebhooksException('dispatcher_only', 'not you')));
    expect(err).toBeInstanceOf(RpcException);
    expect((err as RpcException).getError()).toEqual({ error: 'access_denied', message: 'not you' });
  });

  it('keeps the platform answers: a malformed request is invalid_request', async () => {
    const err = await rejection(() => Promise.reject(new ContractViolation('auth.x', 'bad')));
    expect((err as RpcException).getError()).toEqual({ error: 'invalid_request', message: 'auth.x: bad' });
  });

  it('passes an answer through and leaves unknown errors as they are', async () => {
    await expect(answerAuthRpc(() => Promise.resolve(42))).resolves.toBe(42);
    const bug = new Error('bug');
    expect(await rejection(() => Promise.reject(bug))).toBe(bug);
  });
});
