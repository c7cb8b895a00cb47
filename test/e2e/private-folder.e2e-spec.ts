import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../../scripts/lib/apps.cjs';

/**
 * `npm test` from a clone that other users cannot enter. Root's home and `mktemp -d` are mode
 * 0700, so nginx's workers, `postgres` and the other servers' users cannot reach a checkout inside
 * them unless the scripts keep what those users touch where they can reach it. A fresh clone of
 * this commit goes into such a folder, under a path with a space, and runs a gateway suite (its
 * own files, bodies nginx buffers on disk, its 413) and a fault test (a private PostgreSQL, which
 * never runs as root) there, through the README's test command, as a user would.
 *
 * The clone is of the committed HEAD: uncommitted changes of this checkout are not in it.
 */
jest.setTimeout(15 * 60_000);

/**
 * What this run made for itself, which the clone's run makes anew. The server URLs stay: the clone's
 * run uses this run's servers, with a database, vhost and key prefix of its own.
 */
const RUN_ENV = ['TEST_RUN_ID', 'REDIS_KEY_PREFIX', 'JEST_WORKER_ID'];

let folder: string;
let clone: string;

function git(args: string[], cwd: string): string {
  const res = spawnSync('git', args, { cwd, encoding: 'utf8' });
  if (res.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${res.stderr}`);
  return res.stdout.trim();
}

/** `npm test -- --only <tier> -- <file>` in the clone; resolves its exit code and last line. */
function npmTest(tier: string, file: string): Promise<{ code: number | null; last: string; output: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, E2E_REPLICAS: '1', FAULTS_PROFILE: 'short' };
  for (const name of RUN_ENV) delete env[name];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['scripts/test.mjs', '--only', tier, '--', file], {
      cwd: clone,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (output += d.toString('utf8')));
    child.once('error', reject);
    child.once('exit', (code) => {
      const lines = output.trim().split('\n');
      resolve({ code, last: lines[lines.length - 1] ?? '', output });
    });
  });
}

beforeAll(() => {
  if (!fs.existsSync(path.join(ROOT, '.git')))
    throw new Error('this test clones the checkout: it must be a git repository');
  folder = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-private-'));
  clone = path.join(folder, 'crew record');
  git(['clone', '-q', ROOT, clone], ROOT);
  // The packages of this checkout, as hard links (no second download); the clone's lock gets the
  // original's time, so its run sees them up to date instead of running `npm ci`.
  const cp = spawnSync('cp', ['-al', path.join(ROOT, 'node_modules'), path.join(clone, 'node_modules')]);
  if (cp.status !== 0) throw new Error(`cp -al node_modules failed: ${String(cp.stderr)}`);
  const lock = fs.statSync(path.join(ROOT, 'package-lock.json'));
  fs.utimesSync(path.join(clone, 'package-lock.json'), lock.atime, lock.mtime);
}, 120_000);

afterAll(() => {
  if (folder) fs.rmSync(folder, { recursive: true, force: true });
});

it('the clone sits in a folder only its owner can enter, on a path with a space', () => {
  expect(fs.statSync(folder).mode & 0o777).toBe(0o700);
  expect(clone).toContain(' ');
  expect(git(['rev-parse', 'HEAD'], clone)).toBe(git(['rev-parse', 'HEAD'], ROOT));
});

it.each([
  ['e2e', 'test/e2e/gateway.e2e-spec.ts'],
  ['faults', 'test/faults/sign-in-flood.faults-spec.ts'],
])('`npm test -- --only %s` passes there (%s)', async (tier, file) => {
  const res = await npmTest(tier, file);
  if (res.code !== 0) console.log(res.output.slice(-6000));
  expect(res.last).toMatch(/^tests: [1-9]\d* passed, 0 failed$/);
  expect(res.code).toBe(0);
});
