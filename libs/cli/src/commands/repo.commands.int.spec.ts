import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { loadRepositoriesFile } from '@caseloop/target-repositories';
import { repoInit } from './repo.commands';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, {
    cwd,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: tmpdir(),
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@localhost',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@localhost',
    },
  });

describe('caseloop repo init', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'caseloop-repo-init-spec-'));
    git(dir, 'init', '-q', '-b', 'main');
    await writeFile(
      join(dir, 'package.json'),
      JSON.stringify({ name: 'notes', scripts: { test: 'node --test' } }),
    );
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'app');
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('names files outside the working directory by their own path, not by climbing out of it', async () => {
    const out = join(dir, 'config', 'repositories.yaml');
    expect(relative(process.cwd(), out).startsWith('..')).toBe(true);
    const lines: string[] = [];
    await repoInit(dir, { out }, (l) => lines.push(l));
    expect(lines).toContain(`  npx caseloop repo check notes --repositories ${out}`);
    expect(lines).toContain(`  npm start -- --repositories ${out}`);
    expect(lines.join('\n')).not.toContain('../');
  });

  it("proposes a monorepo's app from its workspace directory, with the client started there", async () => {
    const mono = await mkdtemp(join(tmpdir(), 'caseloop-repo-init-mono-'));
    try {
      git(mono, 'init', '-q', '-b', 'main');
      await writeFile(
        join(mono, 'package.json'),
        JSON.stringify({ name: 'mono', workspaces: ['apps/*'], scripts: { dev: 'turbo run dev' } }),
      );
      for (const app of ['api', 'web']) await mkdir(join(mono, 'apps', app), { recursive: true });
      await writeFile(
        join(mono, 'apps', 'api', 'package.json'),
        JSON.stringify({ scripts: { start: 'node .' } }),
      );
      await writeFile(
        join(mono, 'apps', 'web', 'package.json'),
        JSON.stringify({ devDependencies: { vite: '^6' }, scripts: { dev: 'vite' } }),
      );
      await writeFile(join(mono, 'apps', 'web', 'index.html'), '<title>Web</title>');
      git(mono, 'add', '-A');
      git(mono, 'commit', '-q', '-m', 'mono');
      const out = join(mono, 'config', 'repositories.yaml');
      const lines: string[] = [];
      await repoInit(mono, { out }, (l) => lines.push(l));
      expect(lines).toContain(
        '  client: npm run --silent dev -- --host 127.0.0.1 --port {port} --strictPort (in apps/web)',
      );
      const [entry] = loadRepositoriesFile(out).repositories;
      expect(entry?.client).toMatchObject({ cwd: 'apps/web', url: 'http://127.0.0.1:5173' });
    } finally {
      await rm(mono, { recursive: true, force: true });
    }
  });

  it("proposes a repository without package.json from its Makefile's targets, not an npm script", async () => {
    const py = await mkdtemp(join(tmpdir(), 'caseloop-repo-init-make-'));
    try {
      git(py, 'init', '-q', '-b', 'main');
      await writeFile(
        join(py, 'Makefile'),
        [
          'VENV?=.venv',
          'BIN=$(VENV)/bin',
          '$(VENV): requirements.txt',
          '\tpython3 -m venv $(VENV)',
          '\t$(BIN)/pip install -r requirements.txt',
          '.PHONY: init test dev install',
          'init: $(VENV)',
          'test: $(VENV)',
          '\t$(BIN)/pytest',
          'dev: $(VENV)',
          '\t$(BIN)/python src/server.py',
          'install:',
          '\tcp -r src /usr/local/lib/app',
          '',
        ].join('\n'),
      );
      await writeFile(join(py, 'requirements.txt'), 'flask\npytest\n');
      await writeFile(join(py, 'pytest.toml'), '[pytest]\ntestpaths = ["tests"]\n');
      git(py, 'add', '-A');
      git(py, 'commit', '-q', '-m', 'app');
      const out = join(py, 'config', 'repositories.yaml');
      const lines: string[] = [];
      await repoInit(py, { out }, (l) => lines.push(l));
      expect(lines).toContain('  setup: make init');
      expect(lines).toContain('  checks: test (regression_test)');
      expect(lines).toContain('  client: make dev');
      const [entry] = loadRepositoriesFile(out).repositories;
      expect(entry?.setup).toEqual([
        expect.objectContaining({ command: ['make', 'init'], inputs: ['Makefile', 'requirements.txt'] }),
      ]);
      expect(entry?.checks.map((c) => c.command)).toEqual([['make', 'test']]);
      expect(entry?.client?.start).toEqual(['make', 'dev']);
    } finally {
      await rm(py, { recursive: true, force: true });
    }
  });
});
