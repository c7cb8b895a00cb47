import { RpcException } from '@nestjs/microservices';
import { ContractViolation } from '@svc/contracts';
import { DependencyUnavailableError } from '../http/problem';

/**
 * Runs an RPC handler and turns the failures a caller should act on into answers it can read:
 * a malformed request, or a revocation that could not be made visible everywhere yet
 * (`temporarily_unavailable`: retry). Anything else stays a plain failure.
 */
export async function answerRpc<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof ContractViolation)
      throw new RpcException({ error: 'invalid_request', message: err.message });
    if (err instanceof DependencyUnavailableError) {
      throw new RpcException({ error: 'temporarily_unavailable', message: err.message });
    }
    throw err;
  }
}
