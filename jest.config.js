// Test tiers by suffix: *.unit.spec.ts (pure), *.int.spec.ts (real NATS/Postgres/S3/git/browser on loopback),
// *.e2e.spec.ts (the running system driven from outside).
const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2022',
    },
    module: { type: 'commonjs' },
    sourceMaps: 'inline',
  },
];
const moduleNameMapper = {
  '^@caseloop/(.*)$': '<rootDir>/libs/$1/src',
};
const common = {
  rootDir: __dirname,
  transform: { '^.+\\.ts$': swc },
  moduleNameMapper,
  testEnvironment: 'node',
  modulePathIgnorePatterns: ['<rootDir>/dist/', '<rootDir>/examples/', '<rootDir>/.caseloop/'],
};
module.exports = {
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/**/*.unit.spec.ts'] },
    { ...common, displayName: 'int', testMatch: ['<rootDir>/**/*.int.spec.ts'], slowTestThreshold: 30 },
    { ...common, displayName: 'e2e', testMatch: ['<rootDir>/test/**/*.e2e.spec.ts'] },
    // A 3-node JetStream cluster of nats-server processes, started by each test file (test/cluster).
    { ...common, displayName: 'cluster', testMatch: ['<rootDir>/test/cluster/**/*.cluster.spec.ts'] },
    // The burst of `npm run chaos` (scripts/chaos.ts): long, so only when asked for.
    ...(process.env.CASELOOP_CHAOS
      ? [{ ...common, displayName: 'chaos', testMatch: ['<rootDir>/test/chaos/**/*.chaos.spec.ts'] }]
      : []),
  ],
};
