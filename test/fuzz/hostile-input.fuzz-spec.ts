import path from 'node:path';
import { ROOT } from '../../scripts/lib/apps.cjs';
import { startSystem, type RunningSystem } from '../support/system';
import { obtainFuzzCredentials } from './credentials';
import type { FuzzCredentials } from './requests';
import { formatSummary, runFuzz, writeSummary, type FuzzSummary } from './runner';

/**
 * Hostile input, measured: requests drawn from the OpenAPI description (each operation's
 * parameters and body schema) and mutated (wrong types, huge and deep bodies, invalid UTF-8,
 * duplicate keys, odd and repeated headers, forged cursors and tokens) go through the gateway
 * to every app, with real credentials. Every answer must be a non-5xx, within 10 s, valid
 * against the description. `npm test` runs a short seeded profile; `npm run fuzz` runs 100,000
 * (FUZZ_REQUESTS, FUZZ_SEED; FUZZ_RESULTS_DIR to write the summary JSON).
 */
const REQUESTS = Number(process.env.FUZZ_REQUESTS || 2_000);
const SEED = Number(process.env.FUZZ_SEED || 20_261_125);
const TIMEOUT_MS = 10_000;

// Budget: at worst ~25 requests/s on a busy 2-core machine, plus the system's start.
jest.setTimeout(180_000 + REQUESTS * 40);

let system: RunningSystem | undefined;
let credentials: FuzzCredentials;

beforeAll(async () => {
  system = await startSystem({
    label: 'fuzz',
    replicas: 1,
    // Rate limits far out of reach: the fuzzer measures answers, not the limiter's 429s (which
    // are described, and judged like any other answer when they do come).
    env: { RATE_LIMIT_PER_MINUTE: '1000000', RATE_LIMIT_PER_DAY: '1000000', LOG_LEVEL: 'warn' },
  });
  credentials = await obtainFuzzCredentials(system.baseUrl, `http://localhost:${system.gatewayPort}`);
}, 180_000);

afterAll(async () => {
  await system?.stop();
}, 60_000);

it(`answers ${REQUESTS} hostile requests (seed ${SEED}) without a 5xx, a hang or an answer the description does not allow`, async () => {
  const summary: FuzzSummary = await runFuzz({
    baseUrl: system!.baseUrl,
    credentials,
    requests: REQUESTS,
    seed: SEED,
    timeoutMs: TIMEOUT_MS,
    onProgress: (done, findings) => process.stdout.write(`fuzz: ${done}/${REQUESTS}, ${findings} findings\n`),
  });
  process.stdout.write(`${formatSummary(summary)}\n`);
  if (process.env.FUZZ_RESULTS_DIR) {
    const file = writeSummary(path.resolve(ROOT, process.env.FUZZ_RESULTS_DIR), summary);
    process.stdout.write(`fuzz: summary written to ${path.relative(ROOT, file)}\n`);
  }

  expect(Object.values(summary.byStatus).reduce((a, b) => a + b, 0)).toBe(REQUESTS);
  expect(
    summary.findings.map(
      (f) =>
        `[${f.kind}] ${f.target} (${f.mutation}) → ${f.status}: ${f.message.split('\n').slice(0, 2).join(' ')}`,
    ),
  ).toEqual([]);
});
