// Three tiers (house style): unit specs beside the code, integration specs against real
// PostgreSQL/Redis/RabbitMQ, e2e specs that start the built apps and nginx as processes.
const swc = [
  '@swc/jest',
  {
    jsc: {
      target: 'es2022',
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
      keepClassNames: true,
    },
    module: { type: 'commonjs' },
  },
];
const moduleNameMapper = {
  '^@svc/(contracts|platform|security)$': '<rootDir>/libs/$1/src/index.ts',
};
const common = {
  transform: { '^.+\\.ts$': swc },
  moduleNameMapper,
  testEnvironment: 'node',
  rootDir: __dirname,
};

module.exports = {
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/{apps,libs,test}/**/*.spec.ts'] },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/**/*.integration-spec.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      setupFiles: ['<rootDir>/test/support/worker-env.ts'],
    },
    {
      ...common,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/e2e/**/*.e2e-spec.ts'],
      setupFiles: ['<rootDir>/test/support/worker-env.ts'],
    },
    // The fault matrix (`npm run test:faults`; a short profile in `npm test`): private servers it stops and starts.
    { ...common, displayName: 'faults', testMatch: ['<rootDir>/test/faults/**/*.faults-spec.ts'] },
    // The failover drills (`npm run test:faults` only, never the short profile `npm test` runs).
    { ...common, displayName: 'drills', testMatch: ['<rootDir>/test/faults/**/*.drill-spec.ts'] },
    // Hostile input through the gateway (`npm run fuzz`; a short seeded run in `npm test`).
    { ...common, displayName: 'fuzz', testMatch: ['<rootDir>/test/fuzz/**/*.fuzz-spec.ts'] },
  ],
};
