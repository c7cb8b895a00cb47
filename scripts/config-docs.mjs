#!/usr/bin/env node
// `npm run docs:config`: writes docs/configuration.md from the apps' config specs
// (scripts/docs/configuration-reference.ts), formatted by Prettier. `-- --check` only reports
// whether the committed page is current (exit 1 when not), as the unit test does.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
// On another Node than the project's, the script runs again on it (scripts/lib/node.cjs).
await require('./lib/node.cjs').onProjectNode();
const { ROOT } = require('./lib/deps.cjs');
require('./lib/ts-register.cjs');
const {
  CONFIGURATION_DOC,
  renderConfigurationReference,
  formatMarkdown,
} = require('./docs/configuration-reference.ts');

const page = formatMarkdown(renderConfigurationReference());
const file = path.join(ROOT, CONFIGURATION_DOC);
const current = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
if (process.argv.includes('--check')) {
  if (current !== page) {
    console.error(`${CONFIGURATION_DOC} is out of date: run npm run docs:config`);
    process.exit(1);
  }
  console.log(`${CONFIGURATION_DOC} is current`);
} else if (current === page) {
  console.log(`${CONFIGURATION_DOC} is current`);
} else {
  fs.writeFileSync(file, page);
  console.log(`wrote ${CONFIGURATION_DOC}`);
}
