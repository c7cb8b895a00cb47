import {
  Inject,
  Injectable,
  Optional,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { APP_SCHEMAS } from '@svc/contracts';
import {
  APP_CONFIG,
  DependencyUnavailableError,
  REDIS_CONFIG,
  type ConfigOf,
  type DatabaseConfig,
  type RedisConfig,
} from '@svc/platform';
import { IntrospectionCache, IntrospectionCacheUnavailableError } from '@svc/security';
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { AUTH_SERVER_CONFIG } from '../config';
import type { ExpectedRotation, RefreshOutcome, TokenPairsRepository } from './token-pairs.repository';

/** What the refresh batch thread is started with: its own connections' settings. */
export interface RefreshBatchThreadData {
  readonly app: string;
  readonly schema: string;
  readonly database: DatabaseConfig;
  readonly redis: RedisConfig;
}

export interface RefreshBatchRequest {
  readonly id: number;
  readonly batch: readonly ExpectedRotation[];
}

/** An error as it crosses threads: what the error filter and the give-way rule read of it. */
export interface CarriedError {
  readonly name: string;
  readonly message: string;
  readonly code?: string;
}

/** A batch written: its outcomes, and how long its two writes took (seconds). */
export interface RefreshBatchWritten {
  readonly outcomes: (RefreshOutcome | undefined)[];
  readonly took: { readonly tombstones: number; readonly statement: number };
}

export type RefreshBatchReply =
  ({ readonly id: number } & RefreshBatchWritten) | { readonly id: number; readonly error: CarriedError };

/** The access tokens that these rotations end, tombstoned in one pipelined Redis write. */
export function tombstoneRotations(
  cache: IntrospectionCache,
  rotations: readonly ExpectedRotation[],
): Promise<void> {
  return cache.tombstoneEach(
    rotations.map((r) => ({ clientId: r.rotation.clientId, digest: r.expectedAccessDigest })),
  );
}

/**
 * One batch's writes, in the thread: its access tokens' tombstones in one pipelined Redis write,
 * then, only when Redis has them all, its statement, so no rotation commits before its tombstone.
 * A failed write fails the batch; a batch that gave way to a lock answers `undefined` for each.
 */
export async function writeRefreshBatch(
  cache: IntrospectionCache,
  pairs: TokenPairsRepository,
  batch: readonly ExpectedRotation[],
): Promise<RefreshBatchWritten> {
  const started = performance.now();
  await tombstoneRotations(cache, batch);
  const tombstoned = performance.now();
  const outcomes = await pairs.rotateBatch(batch);
  return {
    outcomes,
    took: { tombstones: (tombstoned - started) / 1000, statement: (performance.now() - tombstoned) / 1000 },
  };
}

export function carried(err: unknown): CarriedError {
  const { name, message, code } = (err ?? {}) as { name?: unknown; message?: unknown; code?: unknown };
  return {
    name: typeof name === 'string' ? name : 'Error',
    message: typeof message === 'string' ? message : String(err),
    ...(typeof code === 'string' && { code }),
  };
}

/** The error again on this side, so that a Redis or PostgreSQL outage is still answered 503. */
function rebuilt(error: CarriedError): Error {
  const err = Object.assign(new Error(error.message), { name: error.name, code: error.code });
  return error.name === 'IntrospectionCacheUnavailableError'
    ? new IntrospectionCacheUnavailableError(err)
    : err;
}

/**
 * The thread's script: beside this module in the build; when this module runs as TypeScript (the
 * integration suites boot auth-server inside Jest, after `npm test` has built dist/), the build's.
 */
function threadEntry(): string {
  const beside = path.join(__dirname, 'refresh-batch.worker.js');
  if (fs.existsSync(beside)) return beside;
  const built = path.resolve(
    __dirname,
    '../../../../dist/apps/auth-server/src/tokens/refresh-batch.worker.js',
  );
  if (fs.existsSync(built)) return built;
  throw new Error(`refresh-batch.worker.js is neither at ${beside} nor at ${built}: run npm run build`);
}

/** The thread's entry script, for tests that start one of their own. */
export const REFRESH_BATCH_THREAD_ENTRY = Symbol('REFRESH_BATCH_THREAD_ENTRY');

/**
 * The thread's heap, beside the request thread's in auth-server's memory limit (the deployment
 * test adds them up): its code (~25 MB once loaded), a batch at a time and its connections' buffers.
 */
export const REFRESH_BATCH_THREAD_HEAP_MB = { maxOldGenerationSizeMb: 40, maxYoungGenerationSizeMb: 8 };

/**
 * The thread loads its dependencies as CommonJS only: packages that offer an ES module to
 * `require()` (the `module-sync` export condition, e.g. `async-function` under typeorm's
 * dependencies) get their CommonJS entry instead. Node's `require()` of an ES module once aborted
 * a whole test process (a V8 fatal error in `ModuleWrap::InstantiateSync`); an abort in this
 * thread takes auth-server with it, where a failed batch would only have been a 503.
 */
const REFRESH_BATCH_THREAD_EXEC_ARGV = ['--no-experimental-require-module'];

/** How long shutdown waits for batches in flight before it stops the thread. */
const SHUTDOWN_DRAIN_MS = 5000;

/**
 * The refresh group commit's writes on a thread of their own (docs/architecture.md, "Token
 * endpoint", step 13). On the request thread each batch's two replies (the tombstones', then the
 * statement's) waited behind whatever that thread was doing: parsing and answering other requests,
 * a scavenge. Here the thread reads each reply as it lands and sends the statement at once, and
 * the request thread hears of the batch once, at its end.
 *
 * The thread has its own PostgreSQL pool (TOKEN_REFRESH_CONCURRENCY connections, one per batch in
 * flight) and its own connection to the state Redis, which it opens as it starts, at boot, so the
 * first refreshes do not wait for them. If it exits, the batches it held fail (503) and the next
 * batch starts another. Shutdown waits for the batches in flight (HTTP is closed by then) before
 * it stops the thread.
 */
@Injectable()
export class RefreshBatchThread implements OnApplicationBootstrap, OnApplicationShutdown {
  private worker?: Worker;
  private readonly waiting = new Map<
    number,
    { resolve: (written: RefreshBatchWritten) => void; reject: (err: Error) => void }
  >();
  private nextId = 0;
  private drained?: () => void;
  private readonly data: RefreshBatchThreadData;

  constructor(
    @Inject(APP_CONFIG)
    config: ConfigOf<typeof AUTH_SERVER_CONFIG>,
    @Optional()
    @Inject(REFRESH_BATCH_THREAD_ENTRY)
    private readonly entry: string = threadEntry(),
  ) {
    const redis: Record<string, unknown> = {};
    for (const key of Object.keys(REDIS_CONFIG)) redis[key] = config[key as keyof typeof config];
    this.data = {
      app: 'auth-server',
      schema: APP_SCHEMAS['auth-server'],
      database: { DATABASE_URL: config.DATABASE_URL, DATABASE_POOL_SIZE: config.TOKEN_REFRESH_CONCURRENCY },
      redis: redis as RedisConfig,
    };
  }

  onApplicationBootstrap(): void {
    if (!this.worker) this.start();
  }

  /** What `writeRefreshBatch` answers for this batch, written by the thread. */
  write(batch: readonly ExpectedRotation[]): Promise<RefreshBatchWritten> {
    const worker = this.worker ?? this.start();
    const id = ++this.nextId;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      worker.postMessage({ id, batch } satisfies RefreshBatchRequest);
    });
  }

  private start(): Worker {
    const worker = new Worker(this.entry, {
      workerData: this.data,
      resourceLimits: REFRESH_BATCH_THREAD_HEAP_MB,
      execArgv: [...process.execArgv, ...REFRESH_BATCH_THREAD_EXEC_ARGV],
    });
    worker.on('message', (reply: RefreshBatchReply) => {
      const waiter = this.waiting.get(reply.id);
      if (!waiter) return;
      this.settled(reply.id);
      if ('error' in reply) waiter.reject(rebuilt(reply.error));
      else waiter.resolve({ outcomes: reply.outcomes, took: reply.took });
    });
    // An uncaught error ends the thread: 'exit' follows and fails what it held.
    worker.on('error', () => undefined);
    worker.on('exit', (code) => {
      if (this.worker === worker) this.worker = undefined;
      const lost = new DependencyUnavailableError(
        'refresh batch thread',
        new Error(`it exited (code ${code}) with batches in flight`),
      );
      for (const [id, waiter] of this.waiting) {
        this.settled(id);
        waiter.reject(lost);
      }
    });
    this.worker = worker;
    return worker;
  }

  private settled(id: number): void {
    this.waiting.delete(id);
    if (this.waiting.size === 0) this.drained?.();
  }

  async onApplicationShutdown(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    if (this.waiting.size > 0) {
      await new Promise<void>((resolve) => {
        this.drained = resolve;
        setTimeout(resolve, SHUTDOWN_DRAIN_MS).unref();
      });
    }
    await worker.terminate();
  }
}
