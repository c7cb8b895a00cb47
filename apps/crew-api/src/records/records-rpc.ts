import { RpcException } from '@nestjs/microservices';
import { answerRpc } from '@svc/platform';
import { RecordsException } from './records.exception';

/** `answerRpc`, where a member the caller named does not exist: an answer it acts on, not a failure. */
export async function answerRecordsRpc<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await answerRpc(work);
  } catch (err) {
    if (err instanceof RecordsException && err.code === 'member_not_found') {
      throw new RpcException({ error: 'member_not_found', message: err.message });
    }
    throw err;
  }
}
