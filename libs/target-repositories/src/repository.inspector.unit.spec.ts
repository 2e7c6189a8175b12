import { parse as parseYaml } from 'yaml';
import { renderEntry, renderStarterFlow } from './repository.entry';
import { inspectRepository } from './repository.inspector';

const files = (tree: Record<string, unknown>) => ({
  read: (path: string) => {
    const v = tree[path];
    return v === undefined ? null : typeof v === 'string' ? v : JSON.stringify(v);
  },
});

describe('repo init: what a repository is read as', () => {
  it('reads a Python project without a Makefile: a virtualenv, its requirements, ruff and pytest in it', () => {
    const r = inspectRepository(
      files({
        'pyproject.toml': '[project]\nname = "shop"\n[tool.ruff]\nline-length = 100\n',
        'requirements.txt': 'django\n',
        'requirements-dev.txt': 'pytest\nruff\n',
        'manage.py': '#!/usr/bin/env python\n',
        '.python-version': '3.12\n',
        'tox.ini': '[tox]\n',
      }),
      'shop',
    );
    expect(r.packageManager).toBeNull();
    expect(r.setup.map((s) => s.command.join(' '))).toEqual([
      'python3 -m venv .venv',
      '.venv/bin/python -m pip install -r requirements.txt -r requirements-dev.txt',
    ]);
    expect(r.setup[1]?.inputs).toEqual(['requirements.txt', 'requirements-dev.txt', 'pyproject.toml']);
    expect(r.checks.map((c) => `${c.kind}:${c.command.join(' ')}`)).toEqual([
      'lint:.venv/bin/python -m ruff check .',
      'regression_test:.venv/bin/python -m pytest',
    ]);
    expect(r.client?.start).toEqual([
      '.venv/bin/python',
      'manage.py',
      'runserver',
      '--noreload',
      '127.0.0.1:{port}',
    ]);
    expect(r.notes).toContainEqual(expect.stringContaining('asks for Python 3.12 (.python-version)'));
    expect(r.skipped).toContainEqual(expect.stringMatching(/^tox\.ini: /));
    expect(r.notes.join('\n')).not.toMatch(/no package\.json/);
  });

  it('reads a Go module as go vet, go test and go build, and says go must be there', () => {
    const r = inspectRepository(files({ 'go.mod': 'module example.com/app\n', 'go.sum': '' }), 'app');
    expect(r.setup).toEqual([
      expect.objectContaining({ command: ['go', 'mod', 'download'], inputs: ['go.mod', 'go.sum'] }),
    ]);
    expect(r.checks.map((c) => `${c.kind}:${c.command.join(' ')}`)).toEqual([
      'lint:go vet ./...',
      'regression_test:go test ./...',
      'build:go build ./...',
    ]);
    expect(r.notes).toContainEqual(expect.stringContaining('go must be on PATH'));
  });

  it('says so when a repository has nothing it can read checks from, and proposes no npm command for it', () => {
    const r = inspectRepository(files({ 'README.md': '# x' }), 'x');
    expect(r.checks).toEqual([]);
    expect(r.notes).toContainEqual(expect.stringContaining('no setup or checks could be proposed'));
    const entry = renderEntry(r, {
      url: '/srv/x',
      targetBranch: 'main',
      flow: 'flows/x.yaml',
      nodeHere: 'v24',
    });
    const parsed = parseYaml(`repositories:\n${entry}`) as {
      repositories: { checks: { command: string[] }[] }[];
    };
    const command = parsed.repositories[0]?.checks[0]?.command ?? [];
    expect(command[0]).toBe('sh');
    expect(command.join(' ')).toContain("put the repository's test command here");
    expect(entry).toContain('# setup: none proposed (no install step was recognized)');
  });

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

  it('reads a "check" script that runs svelte-check or tsc as the typecheck, and no other "check"', () => {
    const r = inspectRepository(
      files({
        'package.json': {
          name: 'svelte-notes',
          devDependencies: { svelte: '^5', 'svelte-check': '^4', typescript: '^5', vite: '^7', vitest: '^4' },
          scripts: {
            dev: 'vite',
            test: 'vitest',
            build: 'vite build',
            check: 'svelte-check --tsconfig ./tsconfig.app.json && tsc -p tsconfig.node.json',
          },
        },
        'pnpm-lock.yaml': "lockfileVersion: '9.0'\n",
      }),
      'x',
    );
    expect(r.checks.map((c) => `${c.name}:${c.kind}:${c.command.join(' ')}`)).toEqual([
      'typecheck:typecheck:corepack pnpm@9 run check',
      'test:regression_test:corepack pnpm@9 run test',
      'build:build:corepack pnpm@9 run build',
    ]);
    expect(r.skipped).toEqual([]);

    const chained = inspectRepository(
      files({
        'package.json': { scripts: { check: 'npm run lint && npm test', verify: 'vue-tsc --watch' } },
      }),
      'x',
    );
    expect(chained.checks).toEqual([]);
    expect(chained.skipped).toEqual([
      expect.stringMatching(/^verify: .* looks like it watches or serves/),
      expect.stringMatching(/^check: not one of the kinds/),
    ]);
  });

  it("starts the client's readiness probe and the starter flow at Vite's base path, where the app is served", () => {
    const app = (config: string) =>
      inspectRepository(
        files({
          'package.json': { devDependencies: { vite: '^7' }, scripts: { dev: 'vite' } },
          'package-lock.json': '{"lockfileVersion":3}',
          'index.html': '<html><body><div id="app"></div></body></html>',
          'vite.config.ts': config,
        }),
        'x',
      );
    const pages = app(`export default defineConfig({\n  base: "/notes",\n  plugins: [svelte()],\n});\n`);
    expect(pages.client?.readyPath).toBe('/notes/');
    expect(pages.client?.how).toContain('it serves under base /notes/ (vite.config.ts)');
    const flow = renderStarterFlow(pages);
    expect(flow).toContain('  - goto: /notes/\n');
    expect(flow).toContain('expect: { path: /notes/, selector: body }');

    expect(app(`export default { base: '/', plugins: [] }`).client?.readyPath).toBe('/');
    expect(app(`export default { base: process.env.BASE ?? '/x/' }`).client?.readyPath).toBe('/');
    expect(renderStarterFlow(app('export default {}'))).toContain('  - goto: /\n');
  });

  it('says when a proposed check runs an end-to-end browser suite, followed through the scripts it runs', () => {
    const r = inspectRepository(
      files({
        'package.json': {
          devDependencies: { vitest: '^2', cypress: '^13' },
          scripts: {
            test: 'npm run test:unit && npm run test:e2e:ci',
            'test:unit': 'vitest run',
            'test:e2e:ci': 'npm run build && concurrently "npm run serve" "cypress run --e2e"',
            build: 'vite build',
            serve: 'vite preview',
          },
        },
        'pnpm-lock.yaml': "lockfileVersion: '9.0'\n",
      }),
      'x',
    );
    expect(r.checks.map((c) => c.name)).toEqual(['focused', 'test', 'build']);
    const e2e = r.notes.filter((n) => /end-to-end/.test(n));
    expect(e2e).toEqual([
      expect.stringMatching(/^check test runs an end-to-end suite with Cypress \(through "test:e2e:ci"\)/),
    ]);
  });

  it('says when a lint or format check rewrites what it finds instead of failing on it', () => {
    const r = inspectRepository(
      files({
        'package.json': {
          devDependencies: { eslint: '^9', prettier: '^3' },
          scripts: {
            lint: 'eslint --fix .',
            format: 'prettier --check .',
            'format:check': 'prettier --check .',
          },
        },
      }),
      'x',
    );
    expect(r.notes.filter((n) => /rewrites/.test(n))).toEqual([
      'check lint runs "eslint --fix .": --fix rewrites what it can fix and passes, so it proves only what it cannot fix; the same command without it fails on the change instead',
    ]);
    const clean = inspectRepository(
      files({ 'package.json': { scripts: { lint: 'eslint . --fix-dry-run', test: 'vitest run --fix' } } }),
      'x',
    );
    expect(clean.notes.filter((n) => /rewrites/.test(n))).toEqual([]);
  });

  it("finds a monorepo's app in its workspace when the root's dev script only delegates to it", () => {
    const tree: Record<string, unknown> = {
      'package.json': {
        name: 'mono',
        private: true,
        devDependencies: { turbo: '^2' },
        scripts: { dev: 'turbo run dev', build: 'turbo run build' },
      },
      'pnpm-lock.yaml': "lockfileVersion: '9.0'\n",
      'pnpm-workspace.yaml': "packages:\n  - 'apps/*'\n  - 'packages/*'\n  - '!**/test/**'\n",
      'apps/docs/package.json': { scripts: { build: 'node build.js' } },
      'apps/web/package.json': { devDependencies: { vite: '^6' }, scripts: { dev: 'vite' } },
      'apps/web/index.html': '<title>Web</title>',
      'apps/web/vite.config.ts': "export default { base: '/app/' }",
      'apps/admin/package.json': { devDependencies: { vite: '^6' }, scripts: { dev: 'vite --mode admin' } },
      'packages/ui/package.json': { scripts: { build: 'tsc' } },
    };
    const dirs: Record<string, string[]> = { apps: ['web', 'docs', 'admin'], packages: ['ui'] };
    const r = inspectRepository({ ...files(tree), list: (d: string) => dirs[d] ?? [] }, 'x');
    expect(r.client).toMatchObject({
      start: ['corepack', 'pnpm@9', 'run', 'dev', '--host', '127.0.0.1', '--port', '{port}', '--strictPort'],
      cwd: 'apps/admin',
    });
    expect(r.notes).toContainEqual(
      expect.stringContaining('workspaces with a dev server: apps/admin, apps/web'),
    );
    // A dependency added to a workspace installs again: every workspace's package.json is an input.
    expect(r.setup[0]?.inputs).toEqual([
      'package.json',
      'pnpm-lock.yaml',
      'pnpm-workspace.yaml',
      'apps/admin/package.json',
      'apps/docs/package.json',
      'apps/web/package.json',
      'packages/ui/package.json',
    ]);

    // One app, named literally in package.json's workspaces (npm): its base and title are its own.
    const npm = inspectRepository(
      files({
        'package.json': {
          workspaces: ['frontend', 'packages/*'],
          scripts: { dev: 'bun run --filter frontend dev' },
        },
        'frontend/package.json': {
          devDependencies: { vite: '^6' },
          scripts: { dev: 'vite', preview: 'vite preview' },
        },
        'frontend/index.html': '<title>Full Stack</title>',
        'frontend/vite.config.ts': "export default { base: '/app/' }",
      }),
      'x',
    );
    expect(npm.client).toMatchObject({
      start: [
        'npm',
        'run',
        '--silent',
        'dev',
        '--',
        '--host',
        '127.0.0.1',
        '--port',
        '{port}',
        '--strictPort',
      ],
      cwd: 'frontend',
      readyPath: '/app/',
    });
    expect(npm.title).toBe('Full Stack');
    expect(renderStarterFlow(npm)).toContain('title: Full Stack');

    // A dev server at the root still wins.
    const root = inspectRepository(
      files({
        'package.json': { workspaces: ['frontend'], scripts: { dev: 'vite' } },
        'frontend/package.json': { scripts: { dev: 'vite' } },
      }),
      'x',
    );
    expect(root.client?.cwd).toBeUndefined();
  });

  it('says a check that calls bun needs bun, and takes a bun lockfile for what it is', () => {
    const r = inspectRepository(
      files({
        'package.json': {
          workspaces: ['frontend'],
          scripts: { lint: 'bun run --filter frontend lint', test: 'npm run unit', unit: 'bunx vitest run' },
        },
        'bun.lock': '{}',
      }),
      'x',
    );
    expect(r.notes.filter((n) => /\bbun\b/.test(n))).toEqual([
      expect.stringMatching(/^a bun lockfile \(bun\.lock\) was found: bun is not set up here/),
      'check lint calls bun ("bun run --filter frontend lint"), which caseloop does not install: it fails unless bun is on PATH where the checks run',
      'check focused calls bun ("bunx vitest run"), which caseloop does not install: it fails unless bun is on PATH where the checks run',
      'check test calls bun ("bunx vitest run", in "unit"), which caseloop does not install: it fails unless bun is on PATH where the checks run',
    ]);
    expect(r.notes.some((n) => n.startsWith('no lockfile'))).toBe(false);
  });

  it("takes the kinds of check a monorepo's root lacks from the app's workspace, run there", () => {
    const r = inspectRepository(
      files({
        'package.json': {
          workspaces: ['web'],
          scripts: { dev: 'npm run dev -w web', lint: 'eslint .', test: 'turbo run test' },
        },
        'package-lock.json': '{"lockfileVersion":3}',
        'web/package.json': {
          devDependencies: { vite: '^6', vitest: '^3' },
          scripts: {
            dev: 'vite',
            build: 'tsc -b && vite build',
            test: 'vitest run',
            'test:unit': 'vitest run unit',
          },
        },
      }),
      'x',
    );
    expect(r.checks.map((c) => `${c.name}:${c.command.join(' ')}:${c.cwd ?? '.'}`)).toEqual([
      'lint:npm run --silent lint:.',
      'focused:npm run --silent test:unit:web',
      'test:npm run --silent test:.',
      'build:npm run --silent build:web',
    ]);
    expect(
      renderEntry(r, { url: '/srv/x', targetBranch: 'main', flow: 'flows/x.yaml', nodeHere: 'v24' }),
    ).toContain('cwd: web # the workspace it runs in');
  });
});
