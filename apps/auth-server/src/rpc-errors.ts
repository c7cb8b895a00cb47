import { RpcException } from '@nestjs/microservices';
import { answerRpc, assertUnreachable } from '@svc/platform';
import { WebhooksException } from './webhooks/webhooks.exception';

/**
 * Runs an RPC handler of auth-server: the platform answers a malformed request or a dependency
 * that is down, and a feature's refusal becomes the error its caller reads, here only.
 */
export async function answerAuthRpc<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await answerRpc(work);
  } catch (err) {
    if (!(err instanceof WebhooksException)) throw err;
    switch (err.code) {
      case 'dispatcher_only':
        throw new RpcException({ error: 'access_denied', message: err.message });
      default:
        return assertUnreachable(err.code);
    }
  }
}
