import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildOpenApiDocument } from '@svc/contracts';

/**
 * The description as standard tools see it: Redocly's recommended rules, and a type generator
 * partners would use (SDKs are out of scope in V1, generated types are not).
 */
const ROOT = join(__dirname, '..', '..');
const bin = (name: string) => join(ROOT, 'node_modules', '.bin', name);

// Built as production and as the sandbox serve it (the sandbox's server is localhost).
const ENVIRONMENTS = {
  production: {
    publicBaseUrl: 'https://api.crew-records.example',
    docsUrl: 'https://api.crew-records.example/docs',
  },
  sandbox: { publicBaseUrl: 'http://localhost:8080', docsUrl: 'http://localhost:8080/docs' },
};

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'openapi-tools-'));
  for (const [name, options] of Object.entries(ENVIRONMENTS)) {
    writeFileSync(join(dir, `${name}.json`), JSON.stringify(buildOpenApiDocument(options), null, 2));
  }
  writeFileSync(join(dir, 'redocly.yaml'), 'extends:\n  - recommended\n');
  // The one answer Redocly's recommendation does not fit: the consent form's POST answers with a
  // 303 redirect (RFC 9700 §4.12), never a 2xx.
  const ignored = "    - '#/paths/~1oauth~1authorize/post/responses'\n";
  writeFileSync(
    join(dir, '.redocly.lint-ignore.yaml'),
    Object.keys(ENVIRONMENTS)
      .map((name) => `${name}.json:\n  operation-2xx-response:\n${ignored}`)
      .join(''),
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface LintReport {
  totals: { errors: number; warnings: number; ignored: number };
  problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[];
}

function lint(file: string): LintReport {
  const res = spawnSync(bin('redocly'), ['lint', file, '--format', 'json'], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
    timeout: 120_000,
  });
  const start = res.stdout.indexOf('{');
  if (start < 0) throw new Error(`redocly lint printed no report (exit ${res.status}): ${res.stderr}`);
  return JSON.parse(res.stdout.slice(start)) as LintReport;
}

const summary = (report: LintReport) =>
  report.problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);

describe('redocly lint (recommended rules)', () => {
  it('finds no error and no warning in the production description', () => {
    const report = lint('production.json');
    expect(summary(report)).toEqual([]);
    expect(report.totals).toEqual({ errors: 0, warnings: 0, ignored: 1 });
  });

  it('finds no error in the sandbox description (only the warning that its server is localhost)', () => {
    const report = lint('sandbox.json');
    expect(report.totals.errors).toBe(0);
    expect(summary(report)).toEqual([
      'warn no-server-example.com: Server `url` should not point to example.com or localhost. at #/servers/0/url',
    ]);
  });
});

describe('openapi-typescript', () => {
  it('generates types without a warning, and they compile', () => {
    // As a partner runs it: in a directory of their own, without this project's Redocly settings.
    const partnerDir = join(dir, 'partner');
    mkdirSync(partnerDir);
    writeFileSync(join(partnerDir, 'openapi.json'), readFileSync(join(dir, 'production.json')));
    const out = join(partnerDir, 'api.d.ts');
    const res = spawnSync(bin('openapi-typescript'), ['openapi.json', '-o', out], {
      cwd: partnerDir,
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
      timeout: 120_000,
    });
    expect({ status: res.status, stderr: res.stderr }).toEqual({ status: 0, stderr: '' });
    expect(res.stdout).not.toMatch(/warn|error|⚠/i);
    const types = readFileSync(out, 'utf8');
    for (const path of ['/v1/me', '/v1/partners/sponsorships/{sponsorship_id}', '/oauth/token']) {
      expect(types).toContain(`"${path}": {`);
    }
    expect(types).toContain('export interface webhooks {');

    // A partner's code against the generated types: the compiler checks both.
    writeFileSync(
      join(partnerDir, 'use.ts'),
      `import type { components, paths } from './api';
type Profile = paths['/v1/me']['get']['responses'][200]['content']['application/json'];
const tier: Profile['membership']['tier'] = 'premium';
const seat: components['schemas']['Seat']['status'] = 'cancelled';
export const used = [tier, seat];
`,
    );
    const tsc = spawnSync(
      bin('tsc'),
      ['--noEmit', '--strict', '--types', 'node', '--skipLibCheck', join(partnerDir, 'use.ts')],
      { cwd: ROOT, encoding: 'utf8', timeout: 120_000 },
    );
    expect({ status: tsc.status, out: tsc.stdout }).toEqual({ status: 0, out: '' });
  });
});
