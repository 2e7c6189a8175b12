// @ts-check
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * Pure code (deciders, workflows, the contracts) imports no framework, driver or Node module:
 * it gets time, ids and data with the command, so it can be tested and replayed anywhere.
 */
const impure = {
  paths: [
    { name: 'pg', message: 'pure code takes data in and returns events; drivers live in adapters' },
    { name: 'typeorm', message: 'pure code takes data in and returns events; drivers live in adapters' },
    { name: 'nats', message: 'pure code takes data in and returns events; drivers live in adapters' },
    { name: 'discord.js', message: 'pure code takes data in and returns events; adapters talk to Discord' },
    {
      name: 'playwright-core',
      message: 'pure code takes data in and returns events; adapters drive the browser',
    },
    { name: 'pino', message: 'pure code does not log; it returns events' },
    { name: 'prom-client', message: 'pure code does not measure itself' },
    { name: 'rxjs', message: 'pure code is synchronous data in, events out' },
    { name: 'ulid', message: 'ids arrive with the command' },
    { name: '@caseloop/ledger', message: 'pure code returns events; handlers append them' },
    { name: '@caseloop/platform', message: 'pure code needs no platform' },
  ],
  patterns: [
    {
      group: ['node:*'],
      message: 'pure code imports no Node module: time, ids and files arrive with the command',
    },
    { group: ['@nestjs/*'], message: 'pure code imports no framework' },
    {
      group: ['@aws-sdk/*', 'ws', 'commander', 'cli-progress', 'fs', 'path', 'crypto', 'child_process', 'os'],
      message: 'pure code imports no driver or Node module',
    },
  ],
};

/**
 * Layers point down: services and tools (scripts, bench) stand on the libraries, never the
 * other way round. What a tool needs of a service (its config schema, its commands) is put
 * together above both (scripts/caseloop.ts, scripts/service-configs.ts).
 */
const libraryLayer = [
  {
    regex: '(^|/)(services|scripts|bench)/',
    message: 'a library never imports a service or a tool: move what both need into a library',
  },
];

/**
 * Files named like pure code that still perform I/O. Each entry is a debt: split the pure part out
 * (decide/evolve) and drop the entry.
 */
/** @type {string[]} */
const impureExceptions = [];

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'coverage/**',
      'examples/**',
      '**/*.js',
      '**/*.cjs',
      '.caseloop/**',
      '**/*.tmp.ts',
    ],
  },
  eslint.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      '@typescript-eslint/no-empty-function': 'off',
      // Nest's dynamic modules are classes with only static members by design.
      '@typescript-eslint/no-extraneous-class': 'off',
      'no-constant-condition': ['error', { checkLoops: false }],
      '@typescript-eslint/no-unused-expressions': ['error', { allowShortCircuit: true, allowTernary: true }],
      // TypeScript's noFallthroughCasesInSwitch checks this with types; ESLint's version misreads nested exhaustive switches.
      'no-fallthrough': 'off',
    },
  },
  {
    files: ['libs/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: libraryLayer }] },
  },
  {
    files: [
      '**/*.decider.ts',
      '**/*.workflow.ts',
      '**/*.evolve.ts',
      '**/*.rules.ts',
      // The coordinator's case rules: the decider, the fold it decides on, the gate, dispatch, review, the wording.
      'services/coordinator/src/cases/decision/**/*.ts',
      'libs/contracts/src/**/*.ts',
      'libs/case-model/src/**/*.ts',
    ],
    ignores: ['**/*.spec.ts', ...impureExceptions],
    // Pure library code obeys the layers too (one rule's options replace the other's per file).
    rules: {
      'no-restricted-imports': ['error', { ...impure, patterns: [...impure.patterns, ...libraryLayer] }],
    },
  },
  {
    files: ['**/*.spec.ts', '**/*.fixture.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off' },
  },
);
