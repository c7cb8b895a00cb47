import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import fc from 'fast-check';
import { assertContract, ContractViolation } from '../support/contract';
import { requestArbitrary, type Body, type FuzzCredentials, type FuzzRequest } from './requests';

/**
 * Sends the drawn requests through the gateway and judges every answer:
 *   - never a 5xx (nothing is failing on purpose while the fuzzer runs);
 *   - an answer within the timeout (no hang, no connection dropped without one);
 *   - valid against the OpenAPI description for that operation and status (test/support/contract.ts:
 *     status listed, headers, content type, body schema, `instance` = `X-Request-Id`);
 *   - the routes the description leaves out: the sign-in page answers HTML or a redirect, the
 *     internal API and the apps' probes never answer 2xx, unknown paths answer a Problem.
 */
export interface FuzzOptions {
  readonly baseUrl: string;
  readonly credentials: FuzzCredentials;
  readonly requests: number;
  readonly seed: number;
  readonly concurrency?: number;
  readonly timeoutMs?: number;
  /** Called every `progressEvery` requests. */
  readonly onProgress?: (done: number, findings: number) => void;
}

export interface Finding {
  readonly kind: 'server-error' | 'hang' | 'no-answer' | 'contract' | 'reachable' | 'undescribed';
  readonly target: string;
  readonly mutation: string;
  readonly status: number;
  readonly message: string;
  /** The request, trimmed, credentials masked. */
  readonly request: string;
  /** Index of the request in the seeded sequence: `--seed S` reproduces it. */
  readonly index: number;
}

export interface FuzzSummary {
  readonly seed: number;
  readonly requests: number;
  readonly durationMs: number;
  readonly byTarget: Record<string, Record<string, number>>;
  readonly byMutation: Record<string, Record<string, number>>;
  readonly byStatus: Record<string, number>;
  readonly maxLatencyMs: number;
  /** Distinct findings (target, kind, status, first line) with how often each happened. */
  readonly findings: readonly (Finding & { readonly count: number })[];
}

const BATCH = 250;

export async function runFuzz(options: FuzzOptions): Promise<FuzzSummary> {
  const { requests, seed, concurrency = 8, timeoutMs = 10_000 } = options;
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const arbitrary = requestArbitrary(options.credentials);
  const byTarget: Record<string, Record<string, number>> = {};
  const byMutation: Record<string, Record<string, number>> = {};
  const byStatus: Record<string, number> = {};
  const findings = new Map<string, Finding & { count: number }>();
  let maxLatencyMs = 0;
  let done = 0;
  const started = Date.now();

  const count = (table: Record<string, Record<string, number>>, row: string, col: string) => {
    table[row] ??= {};
    table[row][col] = (table[row][col] ?? 0) + 1;
  };

  const record = (f: Finding) => {
    // The body differs per answer (its `instance`): what is wrong is in the other lines.
    const what = f.message
      .split('\n')
      .filter((l) => !/^\s*body:/.test(l))
      .join(' ');
    const key = `${f.kind} ${f.target} ${f.status} ${what}`;
    const seen = findings.get(key);
    if (seen) seen.count += 1;
    else findings.set(key, { ...f, count: 1 });
  };

  for (let offset = 0; offset < requests; offset += BATCH) {
    const n = Math.min(BATCH, requests - offset);
    // One sample per batch, seeded from the run's seed and the batch: the run is reproducible
    // without holding 100,000 requests in memory.
    const batch = fc.sample(arbitrary, {
      seed: (Math.imul(seed, 2_654_435_761 | 0) + offset) | 0,
      numRuns: n,
    });
    let next = 0;
    const worker = async () => {
      while (next < batch.length) {
        const i = next++;
        const req = batch[i];
        const result = await send(options.baseUrl, req, agent, timeoutMs);
        const status = result.status ? String(result.status) : 'none';
        count(byTarget, req.target, status);
        count(byMutation, req.mutation, status);
        byStatus[status] = (byStatus[status] ?? 0) + 1;
        maxLatencyMs = Math.max(maxLatencyMs, result.elapsedMs);
        for (const f of judge(req, result, timeoutMs)) record({ ...f, index: offset + i });
        done += 1;
        if (options.onProgress && done % 5000 === 0) options.onProgress(done, findings.size);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
  }
  agent.destroy();
  return {
    seed,
    requests,
    durationMs: Date.now() - started,
    byTarget,
    byMutation,
    byStatus,
    maxLatencyMs,
    findings: [...findings.values()].sort((a, b) => b.count - a.count),
  };
}

interface Result {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly text: string;
  readonly elapsedMs: number;
  readonly error?: string;
}

function materialize(body: Body): Buffer {
  if (Buffer.isBuffer(body)) return body;
  const out = Buffer.alloc(body.huge, 0x61);
  out.write(body.contentPrefix);
  return out;
}

/**
 * One request with node:http: repeated header names go out as separate lines, Latin-1 header
 * bytes as they are. An answer that arrives before the upload is finished (a 413) counts.
 */
function send(baseUrl: string, req: FuzzRequest, agent: http.Agent, timeoutMs: number): Promise<Result> {
  const started = Date.now();
  const body = req.body === undefined ? undefined : materialize(req.body);
  // With headers as a list Node adds no Host of its own.
  const raw: string[] = req.headers.some(([k]) => k === 'host') ? [] : ['host', new URL(baseUrl).host];
  for (const [k, v] of req.headers) raw.push(k, v);
  if (body !== undefined && !req.headers.some(([k]) => k === 'content-length'))
    raw.push('content-length', String(body.length));
  return new Promise((resolve) => {
    let settled = false;
    const finish = (r: Omit<Result, 'elapsedMs'>) => {
      if (settled) return;
      settled = true;
      resolve({ ...r, elapsedMs: Date.now() - started });
    };
    let client: http.ClientRequest;
    try {
      client = http.request(`${baseUrl}${req.path}`, {
        method: req.method,
        headers: raw,
        agent,
      });
    } catch (err) {
      // Node refused to send it (its own header or path checks): not an answer of the service.
      finish({ status: -1, headers: {}, text: '', error: `not sent: ${(err as Error).message}` });
      return;
    }
    const timer = setTimeout(() => {
      finish({ status: 0, headers: {}, text: '', error: `no answer within ${timeoutMs} ms` });
      client.destroy();
    }, timeoutMs);
    client.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', (err) => {
        clearTimeout(timer);
        finish({ status: 0, headers: {}, text: '', error: `response: ${err.message}` });
      });
      res.on('end', () => {
        clearTimeout(timer);
        finish({
          status: res.statusCode ?? 0,
          headers: res.headers,
          text: Buffer.concat(chunks).toString('utf8'),
        });
      });
    });
    client.on('error', (err) => {
      // EPIPE/ECONNRESET while uploading is normal when the answer (a 413) came first.
      setTimeout(() => {
        clearTimeout(timer);
        finish({ status: 0, headers: {}, text: '', error: err.message });
      }, 200);
    });
    client.end(body);
  });
}

const INTERNAL = /^\/(internal\/|readyz|metrics)/;

function judge(req: FuzzRequest, res: Result, timeoutMs: number): Omit<Finding, 'index'>[] {
  const base = { target: req.target, mutation: req.mutation, status: res.status, request: describe(req) };
  if (res.status === -1) return []; // never left this process
  if (res.status === 0) {
    const hang = res.elapsedMs >= timeoutMs;
    return [{ ...base, kind: hang ? 'hang' : 'no-answer', message: res.error ?? 'no answer' }];
  }
  const out: Omit<Finding, 'index'>[] = [];
  if (res.status >= 500)
    out.push({ ...base, kind: 'server-error', message: `${res.status}: ${res.text.slice(0, 300)}` });
  if (res.elapsedMs >= timeoutMs)
    out.push({ ...base, kind: 'hang', message: `answered after ${res.elapsedMs} ms` });
  // Over the body limit the answer is 413 whatever else is wrong (the gateway never reads it all).
  if (req.mutation === 'huge-body' && res.status !== 413)
    out.push({
      ...base,
      kind: 'undescribed',
      message: `a body over the limit answered ${res.status}, not 413`,
    });
  const pathname = req.path.split('?')[0];
  if (INTERNAL.test(pathname) || req.target.endsWith(' internal')) {
    if (res.status < 300)
      out.push({
        ...base,
        kind: 'reachable',
        message: `${req.method} ${pathname} answered ${res.status} through the gateway`,
      });
    return out;
  }
  if (req.target.endsWith(' /login')) {
    const type = String(res.headers['content-type'] ?? '');
    const redirect = res.status >= 300 && res.status < 400;
    if (!redirect && !/^(text\/html|application\/problem\+json)/.test(type))
      out.push({
        ...base,
        kind: 'undescribed',
        message: `sign-in page answered ${res.status} with Content-Type ${JSON.stringify(type)}`,
      });
    return out;
  }
  try {
    assertContract(req.method, `http://x${pathSafeForUrl(req.path)}`, res);
  } catch (err) {
    const message = err instanceof ContractViolation ? err.message.replace(/^[^\n]*\n/, '') : String(err);
    out.push({ ...base, kind: 'contract', message });
  }
  if (req.target.endsWith(' unknown') && res.status < 400 && !(res.status >= 300 && res.status < 400))
    out.push({ ...base, kind: 'reachable', message: `unknown path answered ${res.status}` });
  return out;
}

/** The path as the contract check parses it (a raw Latin-1 byte would not make a URL). */
function pathSafeForUrl(p: string): string {
  return p.replace(/[^\x21-\x7e]/gu, (c) =>
    [...Buffer.from(c, 'latin1')].map((b) => `%${b.toString(16)}`).join(''),
  );
}

function mask(value: string): string {
  return value.replace(/(Bearer|Basic)\s+(\S{0,6})\S*/gi, '$1 $2…').replace(/(svc_session=)[^;]*/g, '$1…');
}

function describe(req: FuzzRequest): string {
  const body =
    req.body === undefined
      ? ''
      : Buffer.isBuffer(req.body)
        ? req.body.subarray(0, 200).toString('latin1')
        : `<${req.body.huge} bytes>`;
  const headers = req.headers.map(([k, v]) => `${k}: ${mask(v).slice(0, 120)}`).join(' | ');
  return mask(
    `${req.method} ${req.path.slice(0, 200)} [${headers}] ${body.replace(/(client_secret|token|refresh_token)=[^&]*/g, '$1=…')}`,
  );
}

// ---- report ------------------------------------------------------------------------------------

export function formatSummary(s: FuzzSummary): string {
  const statuses = Object.keys(s.byStatus).sort();
  const width = Math.max(...Object.keys(s.byTarget).map((t) => t.length), 10);
  const row = (label: string, cells: Record<string, number | string>) =>
    `${label.padEnd(width)} ${statuses.map((st) => String(cells[st] ?? '').padStart(6)).join('')}`;
  /** A table of answers by status: a heading row, then a row per key. */
  const table = (heading: string, rows: Record<string, Record<string, number>>) => [
    row(heading, Object.fromEntries(statuses.map((st) => [st, st]))),
    ...Object.keys(rows)
      .sort()
      .map((key) => row(key, rows[key])),
  ];
  const lines = [
    `fuzz: ${s.requests} requests, seed ${s.seed}, ${(s.durationMs / 1000).toFixed(1)} s, max latency ${s.maxLatencyMs} ms`,
    '',
    ...table('operation', s.byTarget),
    row('total', s.byStatus),
    '',
    ...table('mutation', s.byMutation),
    '',
    s.findings.length === 0
      ? 'findings: none'
      : `findings: ${s.findings.length} distinct, ${s.findings.reduce((n, f) => n + f.count, 0)} answers`,
    ...s.findings.flatMap((f) => [
      `  [${f.kind}] ${f.target} (${f.mutation}) → ${f.status} ×${f.count} (first: request #${f.index})`,
      ...f.message
        .split('\n')
        .slice(0, 6)
        .map((l) => `      ${l.slice(0, 300)}`),
      `      request: ${f.request.slice(0, 400)}`,
    ]),
  ];
  return lines.join('\n');
}

export function writeSummary(dir: string, s: FuzzSummary): string {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `fuzz-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(file, `${JSON.stringify(s, null, 2)}\n`);
  return file;
}
