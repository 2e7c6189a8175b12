import { inspectRepository } from './repository.inspector';

const files = (tree: Record<string, unknown>) => ({
  read: (path: string) => {
    const v = tree[path];
    return v === undefined ? null : typeof v === 'string' ? v : JSON.stringify(v);
  },
});

describe('repo init: what a repository is read as', () => {
  it('reads check:lint and check:type as lint and typecheck, next to format and test', () => {
    const r = inspectRepository(
      files({
        'package.json': {
          name: 'cli-lib',
          engines: { node: '>=22.12.0' },
          devDependencies: { eslint: '^9', typescript: '^5' },
          scripts: {
            check: 'npm run check:type && npm run check:lint && npm run check:format',
            'check:format': 'prettier --check .',
            'check:lint': 'eslint .',
            'check:type': 'tsc -p tsconfig.json',
            test: 'node --test',
          },
        },
        'package-lock.json': '{"lockfileVersion":3}',
      }),
      'fallback',
    );
    expect(r.setup.map((s) => s.command.join(' '))).toEqual(['npm ci --no-audit --no-fund']);
    expect(r.checks.map((c) => `${c.name}:${c.kind}:${c.command.join(' ')}`)).toEqual([
      'format:format:npm run --silent check:format',
      'lint:lint:npm run --silent check:lint',
      'typecheck:typecheck:npm run --silent check:type',
      'test:regression_test:npm run --silent test',
    ]);
    expect(r.node).toEqual({ wanted: '>=22.12.0', from: 'engines.node' });
    expect(r.skipped).toEqual([expect.stringMatching(/^check: not one of the kinds/)]);
  });

  it('prefers the plain script name when both spellings exist', () => {
    const r = inspectRepository(
      files({ 'package.json': { scripts: { lint: 'eslint src', 'check:lint': 'eslint .' } } }),
      'x',
    );
    expect(r.checks.map((c) => c.command.join(' '))).toEqual(['npm run --silent lint']);
  });

  it('pins pnpm to the major its lockfile was written by, and says so', () => {
    const r = inspectRepository(
      files({
        'package.json': { devDependencies: { vitest: '^3' }, scripts: { test: 'vitest run' } },
        'pnpm-lock.yaml': "lockfileVersion: '9.0'\n",
      }),
      'x',
    );
    expect(r.setup[0]?.command).toEqual(['corepack', 'pnpm@9', 'install', '--frozen-lockfile']);
    expect(r.notes).toContainEqual(
      expect.stringContaining('downloads pnpm@9 (the major the lockfile was written by'),
    );
  });
});
