import fs from 'node:fs';
import path from 'node:path';
import {
  APP_SPECS,
  CONFIGURATION_DOC,
  formatMarkdown,
  GATEWAY_SHARED_VARIABLES,
  GATEWAY_VARIABLES,
  renderConfigurationReference,
} from '../../scripts/docs/configuration-reference';

const ROOT = path.resolve(__dirname, '..', '..');

describe('docs/configuration.md', () => {
  const page = formatMarkdown(renderConfigurationReference());

  it('is what the config specs generate (run npm run docs:config after changing a spec)', () => {
    const committed = fs.readFileSync(path.join(ROOT, CONFIGURATION_DOC), 'utf8');
    const verdict =
      committed === page
        ? 'current'
        : `${CONFIGURATION_DOC} differs from the apps' config specs: run npm run docs:config`;
    expect(verdict).toBe('current');
  });

  it("has a row for every variable an app's spec reads", () => {
    const names = new Set(Object.values(APP_SPECS).flatMap((spec) => Object.keys(spec)));
    const missing = [...names].filter((name) => !page.includes(`| \`${name}\``));
    expect(missing).toEqual([]);
  });

  it('has a row for every variable the gateway reads', () => {
    const source = fs.readFileSync(path.join(ROOT, 'apps/gateway/src/gateway-options.ts'), 'utf8');
    const read = new Set([...source.matchAll(/get\('([A-Z0-9_]+)'\)/g)].map((m) => m[1]));
    const documented = [...GATEWAY_SHARED_VARIABLES, ...GATEWAY_VARIABLES.map((v) => v.name)];
    const upstreams = GATEWAY_VARIABLES.map((v) => v.name).filter((name) => name.endsWith('_UPSTREAMS'));
    expect(upstreams).toHaveLength(4);
    expect([...read].filter((name) => !documented.includes(name))).toEqual([]);
    expect(documented.filter((name) => !read.has(name) && !upstreams.includes(name))).toEqual([]);
  });

  it('cites no document outside the repository', () => {
    expect(page).not.toMatch(/interface\.md|decisions\.md/);
  });
});
