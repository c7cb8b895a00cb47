import { once } from 'node:events';
import { parentPort, workerData } from 'node:worker_threads';
import { DataSource } from 'typeorm';
import { createRedis, dataSourceOptions, Sql } from '@svc/platform';
import { IntrospectionCache, IntrospectionCacheUnavailableError } from '@svc/security';
import {
  carried,
  writeRefreshBatch,
  type RefreshBatchReply,
  type RefreshBatchRequest,
  type RefreshBatchThreadData,
} from './refresh-batch-thread';
import { TokenPairsRepository } from './token-pairs.repository';

/**
 * The refresh batch thread's entry (see RefreshBatchThread): it writes each batch it is sent with
 * its own PostgreSQL pool and state Redis connection, opened as the thread starts, and opened
 * again by the next batch when that failed (a database still starting, say).
 */
const data = workerData as RefreshBatchThreadData;
const port = parentPort!;

/** How long the first batch waits for Redis to accept commands (it fails fast after). */
const REDIS_READY_MS = 2000;

type Write = (batch: RefreshBatchRequest['batch']) => ReturnType<typeof writeRefreshBatch>;

async function open(): Promise<Write> {
  const state = createRedis(data.redis);
  state.on('error', () => undefined);
  const dataSource = new DataSource(
    dataSourceOptions(data.app, data.database, { schema: data.schema, migrations: [] }),
  );
  try {
    await Promise.race([
      once(state, 'ready'),
      new Promise((_, reject) =>
        setTimeout(
          // The state Redis is down: answered 503, as any other tombstone write that Redis refused.
          () => reject(new IntrospectionCacheUnavailableError(new Error('Redis did not become ready'))),
          REDIS_READY_MS,
        ).unref(),
      ),
    ]);
    await dataSource.initialize();
  } catch (err) {
    state.disconnect();
    if (dataSource.isInitialized) await dataSource.destroy().catch(() => undefined);
    throw err;
  }
  // Tombstones are written to the state Redis only; the answers' cache is not read here.
  const cache = new IntrospectionCache(state, state);
  const pairs = new TokenPairsRepository(new Sql(dataSource, data.app));
  return (batch) => writeRefreshBatch(cache, pairs, batch);
}

let opened: Promise<Write> | undefined;

function opening(): Promise<Write> {
  opened ??= open().catch((err: unknown) => {
    opened = undefined;
    throw err;
  });
  return opened;
}

// At start, so the first batch finds the connections open; a failure here is the next batch's to retry.
opening().catch(() => undefined);

port.on('message', (request: RefreshBatchRequest) => {
  opening()
    .then((write) => write(request.batch))
    .then(
      (written) => port.postMessage({ id: request.id, ...written } satisfies RefreshBatchReply),
      (err: unknown) => port.postMessage({ id: request.id, error: carried(err) } satisfies RefreshBatchReply),
    );
});
