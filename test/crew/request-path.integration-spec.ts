import { Session } from 'node:inspector/promises';
import path from 'node:path';
import { createCrewMember } from '../support/app-factories';
import { accessToken } from '../support/oauth/flow';
import { useCrewApi } from '../support/starters/crew-api';

/**
 * The files of apps/ and libs/ that one `GET /v1/me` with a cached token runs code of, found with
 * V8's precise coverage (a function called at least once between two samples): what a newcomer
 * reads to follow the request (docs/architecture.md, "One request, end to end"). A ceiling, so the path can
 * shrink but not quietly grow back.
 */
jest.setTimeout(30_000);

const MAX_FILES = 18;
const ROOT = path.resolve(__dirname, '../..');
const { auth, crew } = useCrewApi();

/** Files (relative to the repository) with a function other than the module's own body that ran. */
function filesRun(result: Awaited<ReturnType<typeof takeCoverage>>): string[] {
  const files = new Set<string>();
  for (const script of result) {
    const file = script.url.startsWith('file://') ? new URL(script.url).pathname : script.url;
    const rel = path.relative(ROOT, file);
    if (!/^(apps|libs)\//.test(rel)) continue;
    const ran = script.functions.some((fn) => fn.functionName !== '' && fn.ranges.some((r) => r.count > 0));
    if (ran) files.add(rel);
  }
  return [...files].sort();
}

const session = new Session();
async function takeCoverage() {
  return (await session.post('Profiler.takePreciseCoverage')).result;
}

afterAll(() => session.disconnect());

it(`passes through at most ${MAX_FILES} files of apps/ and libs/ on a cached token`, async () => {
  const member = await createCrewMember(auth, crew);
  const token = await accessToken(auth, member);
  // Warm: the token's introspection is cached and every lazy path has run once.
  for (let i = 0; i < 3; i += 1) expect((await crew.get('/v1/me', token)).status).toBe(200);

  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
  // Five requests, each between two samples (a sample resets the counts); the files all five ran,
  // since the app's timers (the outbox relay's poll, say) may land in one window but not in all.
  let files: string[] | undefined;
  for (let i = 0; i < 5; i += 1) {
    await takeCoverage();
    const res = await crew.get('/v1/me', token);
    expect(res.status).toBe(200);
    const ran = filesRun(await takeCoverage());
    files = files ? files.filter((f) => ran.includes(f)) : ran;
  }
  await session.post('Profiler.stopPreciseCoverage');
  if (!files) throw new Error('no sample taken');

  // The request's own files: the app's members feature and the shared authentication.
  expect(files).toEqual(expect.arrayContaining([expect.stringMatching(/^apps\/crew-api\//)]));
  process.stdout.write(
    `GET /v1/me (cached token) ran code of ${files.length} files:\n  ${files.join('\n  ')}\n`,
  );
  expect(files.length).toBeLessThanOrEqual(MAX_FILES);
});
