import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../../scripts/lib/apps.cjs';

/**
 * One Node everywhere: the release in .node-version (the current LTS) is the one the scripts run
 * on (scripts/lib/node.cjs), the one the images pin, and the one `engines` and the type
 * definitions describe. A bump changes .node-version and these files together.
 */
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
const version = read('.node-version').trim();
const major = version.split('.')[0];

function filesUnder(dir: string, ext: RegExp): string[] {
  const abs = path.join(ROOT, dir);
  if (!fs.existsSync(abs)) return [];
  return fs
    .readdirSync(abs, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && ext.test(e.name))
    .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name)));
}

describe('one Node release', () => {
  it('is an exact release of Node 24, the current LTS', () => {
    expect(version).toMatch(/^24\.\d+\.\d+$/);
  });

  it('is what package.json admits and types', () => {
    const pkg = JSON.parse(read('package.json'));
    expect(pkg.engines.node).toBe(`>=${version} <${Number(major) + 1}`);
    expect(pkg.devDependencies['@types/node']).toMatch(new RegExp(`^\\^${major}\\.`));
  });

  it('is the image every Dockerfile stage is built from', () => {
    const images = [...read('Dockerfile').matchAll(/^ARG NODE_IMAGE=(\S+)/gm)].map((m) => m[1]);
    expect(images).toEqual([expect.stringMatching(new RegExp(`^node:${version.replace(/\./g, '\\.')}-`))]);
  });

  it('is the only Node image that compose and Kubernetes name', () => {
    const files = [
      'docker-compose.yml',
      ...filesUnder('compose', /\.ya?ml$/),
      ...filesUnder('k8s', /\.(ya?ml|md)$/),
    ].filter((f) => fs.existsSync(path.join(ROOT, f)));
    const named = files.flatMap((f) =>
      [...read(f).matchAll(/\bnode:(\d[\w.-]*)/g)].map((m) => ({ file: f, tag: m[1] })),
    );
    for (const { file, tag } of named)
      expect({ file, tag: tag.split('-')[0] }).toEqual({ file, tag: version });
  });
});
