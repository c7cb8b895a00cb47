import { RpcException } from '@nestjs/microservices';
import { ContractViolation } from '@svc/contracts';
import { isDatabaseUnreachable } from '../database/unreachable';
import { DependencyUnavailableError } from '../http/problem';

/**
 * Runs an RPC handler and turns the failures a caller should act on into answers it can read:
 * a malformed request, or a dependency that could not do the work right now (a revocation not
 * yet visible everywhere, a database that is down or whose pool stayed exhausted past its connect
 * timeout: `temporarily_unavailable`, retry). Anything else stays a plain failure.
 */
export async function answerRpc<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof ContractViolation)
      throw new RpcException({ error: 'invalid_request', message: err.message });
    if (err instanceof DependencyUnavailableError || isDatabaseUnreachable(err)) {
      const message = err instanceof Error ? err.message : String(err);
      throw new RpcException({ error: 'temporarily_unavailable', message });
    }
    throw err;
  }
}
