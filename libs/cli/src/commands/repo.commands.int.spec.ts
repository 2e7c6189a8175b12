import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
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
});
