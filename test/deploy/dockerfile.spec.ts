/** The Dockerfile: build and runtime stages. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './k8s-render';
describe('Dockerfile', () => {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  const stages = dockerfile.split(/^FROM /m).slice(1);
  const stage = (name: string) => {
    const found = stages.find((s) => new RegExp(`^\\S+ AS ${name}\\s`, 'i').test(s));
    if (!found) throw new Error(`Dockerfile has no stage ${name}`);
    return found;
  };

  it('builds with the full tree and runs with production dependencies only, as a non-root user', () => {
    expect(stage('build')).toMatch(/npm ci\b/);
    expect(stage('build')).toMatch(/npm run build/);
    expect(stage('prod-deps')).toMatch(/npm ci --omit=dev/);
    expect(stage('runtime')).toMatch(/ENV NODE_ENV=production/);
    for (const name of ['app', 'gateway']) {
      const users = [...(stage('runtime') + stage(name)).matchAll(/^USER (\S+)/gm)].map((m) => m[1]);
      expect(users.at(-1)).not.toBe('root');
    }
    // The default target (the last stage) is the Nest app image.
    expect(stages.at(-1)).toMatch(/^\S+ AS app\s/);
  });

  it('builds on Node 24 LTS, pinned to an exact release, with BuildKit npm cache mounts and npm ci only', () => {
    const image = /^ARG NODE_IMAGE=(\S+)$/m.exec(dockerfile)?.[1] ?? '';
    // The one supported Node (package.json engines): an exact 24.x.y, never a floating tag.
    expect(image).toMatch(/^node:24\.\d+\.\d+-bookworm-slim$/);
    const npmRuns = dockerfile.split('\n').filter((line) => /\bnpm (ci|install|i)\b/.test(line));
    expect(npmRuns).toHaveLength(2);
    for (const line of npmRuns) {
      expect(line).toMatch(/^RUN --mount=type=cache,target=\/root\/\.npm npm ci\b/);
      expect(line).not.toMatch(/npm (install|i)\b/);
    }
    expect(dockerfile).toMatch(/^# syntax=docker\/dockerfile:1/);
  });

  it('has a gateway target with nginx that drains on SIGQUIT', () => {
    expect(stage('gateway')).toMatch(/nginx-light/);
    expect(stage('gateway')).toMatch(/STOPSIGNAL SIGQUIT/);
    expect(stage('gateway')).toMatch(/generate\.js --out/);
  });
});
