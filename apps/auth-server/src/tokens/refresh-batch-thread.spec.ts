import { DependencyUnavailableError } from '@svc/platform';
import { IntrospectionCacheUnavailableError } from '@svc/security';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RefreshBatchThread } from './refresh-batch-thread';
import type { ExpectedRotation } from './token-pairs.repository';

/**
 * The request thread's side of the refresh batch thread: batches matched to their answers, errors
 * that keep what the error filter reads, a thread that exits, shutdown. A script stands in for
 * the thread here (the real one is TypeScript, run from dist/ by test/oauth's integration suites).
 */
const STAND_IN = `
const { parentPort, workerData } = require('node:worker_threads');
parentPort.on('message', ({ id, batch }) => {
  const ask = batch[0].rotation.refreshDigest;
  const rotated = () => batch.map((b) => ({ outcome: 'rotated', userId: b.rotation.refreshDigest, scopes: [], endedAccessDigest: b.expectedAccessDigest }));
  const took = { tombstones: 0.001, statement: 0.002 };
  if (ask === 'data') return parentPort.postMessage({ id, outcomes: [workerData], took });
  if (ask === 'redis-down') return parentPort.postMessage({ id, error: { name: 'IntrospectionCacheUnavailableError', message: 'redis (introspection cache) is unavailable' } });
  if (ask === 'statement-timeout') return parentPort.postMessage({ id, error: { name: 'error', message: 'canceling statement due to statement timeout', code: '57014' } });
  if (ask === 'loads') return parentPort.postMessage({ id, outcomes: [require('node:module').createRequire(${JSON.stringify(require.resolve('get-intrinsic'))}).resolve('async-function')], took });
  if (ask === 'exit') return process.exit(3);
  if (ask === 'slow') return setTimeout(() => parentPort.postMessage({ id, outcomes: rotated(), took }), 300);
  parentPort.postMessage({ id, outcomes: rotated(), took });
});
`;

const config = {
  DATABASE_URL: 'postgres://svc_auth@127.0.0.1:5432/svc',
  DATABASE_POOL_SIZE: 10,
  TOKEN_REFRESH_CONCURRENCY: 2,
  REDIS_URL: 'redis://127.0.0.1:6379',
  REDIS_KEY_PREFIX: 'test:',
} as never;

const rotation = (digest: string): ExpectedRotation => ({
  rotation: {
    refreshDigest: digest,
    clientId: 'partner',
    secretDigest: 's',
    scopes: null,
    next: {
      id: `tkp_${digest}`,
      accessDigest: 'a',
      refreshDigest: 'r',
      accessExpiresAt: new Date(),
      refreshExpiresAt: new Date(),
    },
    at: new Date(),
  },
  expectedAccessDigest: `expected-${digest}`,
});

let entry: string;
let thread: RefreshBatchThread;

beforeAll(() => {
  entry = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'refresh-batch-thread-')), 'stand-in.cjs');
  fs.writeFileSync(entry, STAND_IN);
});

beforeEach(() => {
  thread = new RefreshBatchThread(config, entry);
});

afterEach(() => thread.onApplicationShutdown());

describe('RefreshBatchThread', () => {
  it('answers each batch with what the thread wrote for it, also when batches overlap', async () => {
    const [slow, quick] = [thread.write([rotation('slow'), rotation('b')]), thread.write([rotation('c')])];
    const answers = await Promise.all([slow, quick]);
    expect(answers.map((a) => a.outcomes.map((o) => (o as { userId: string }).userId))).toEqual([
      ['slow', 'b'],
      ['c'],
    ]);
    expect(answers[0].outcomes[1]).toMatchObject({ outcome: 'rotated', endedAccessDigest: 'expected-b' });
    // How long the thread's two writes took, for the stage histogram.
    expect(answers[1].took).toEqual({ tombstones: 0.001, statement: 0.002 });
  });

  it('starts the thread with the database and state Redis settings, one connection per batch in flight', async () => {
    const [data] = (await thread.write([rotation('data')])).outcomes as unknown as [Record<string, unknown>];
    expect(data).toEqual({
      app: 'auth-server',
      schema: 'auth',
      database: { DATABASE_URL: 'postgres://svc_auth@127.0.0.1:5432/svc', DATABASE_POOL_SIZE: 2 },
      redis: expect.objectContaining({ REDIS_URL: 'redis://127.0.0.1:6379', REDIS_KEY_PREFIX: 'test:' }),
    });
  });

  it('starts the thread loading CommonJS only, never an ES module through require()', async () => {
    // get-intrinsic (under typeorm) requires async-function, which offers require() an ES module.
    const [loaded] = (await thread.write([rotation('loads')])).outcomes as unknown as [string];
    expect(path.basename(loaded)).toBe('index.js');
  });

  it('fails a batch with an error that still says which dependency is down', async () => {
    const redis = await thread.write([rotation('redis-down')]).catch((err: unknown) => err);
    expect(redis).toBeInstanceOf(IntrospectionCacheUnavailableError);
    const postgres = await thread.write([rotation('statement-timeout')]).catch((err: unknown) => err);
    // The SQLSTATE and message are what the error filter reads to answer 503.
    expect(postgres).toMatchObject({
      code: '57014',
      message: 'canceling statement due to statement timeout',
    });
  });

  it('fails the batches of a thread that exited, and starts another for the next batch', async () => {
    const held = thread.write([rotation('slow')]);
    const exited = await thread.write([rotation('exit')]).catch((err: unknown) => err);
    expect(exited).toBeInstanceOf(DependencyUnavailableError);
    await expect(held).rejects.toBeInstanceOf(DependencyUnavailableError);
    const next = await thread.write([rotation('d')]);
    expect(next.outcomes).toEqual([expect.objectContaining({ outcome: 'rotated', userId: 'd' })]);
  });

  it('lets the batches in flight finish before shutdown stops the thread', async () => {
    const held = thread.write([rotation('slow')]);
    await thread.onApplicationShutdown();
    expect((await held).outcomes).toEqual([expect.objectContaining({ userId: 'slow' })]);
  });
});
