// The failover drills (`npm run test:faults` only, never the short profile `npm test` runs):
// the faults project's settings, with the drills' own file names.
const base = require('../../jest.config.js').projects.find((p) => p.displayName === 'faults');

module.exports = {
  ...base,
  rootDir: require('node:path').resolve(__dirname, '../..'),
  displayName: 'drills',
  testMatch: ['<rootDir>/test/faults/**/*.drill-spec.ts'],
};
