import fs from 'node:fs';
import path from 'node:path';
import {
  APP_SPECS,
  CONFIGURATION_DOC,
  formatMarkdown,
  renderConfigurationReference,
} from '../../scripts/docs/configuration-reference';
import { GATEWAY_CONFIG } from '../../apps/gateway/src/gateway-options';

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

  it('has a row for every variable the gateway reads, and the gateway reads its environment only through its spec', () => {
    const missing = Object.keys(GATEWAY_CONFIG).filter((name) => !page.includes(`| \`${name}\``));
    expect(missing).toEqual([]);
    expect(Object.keys(GATEWAY_CONFIG).filter((name) => name.endsWith('_UPSTREAMS'))).toHaveLength(5);
    const source = fs.readFileSync(path.join(ROOT, 'apps/gateway/src/gateway-options.ts'), 'utf8');
    expect(source.match(/\benv\[|process\.env/g) ?? []).toEqual([]);
  });

  it('cites no document outside the repository', () => {
    expect(page).not.toMatch(/interface\.md|decisions\.md/);
  });
});
