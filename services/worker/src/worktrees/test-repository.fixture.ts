import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Test support: a bare "remote" and a developer clone that moves its branch, with real git. */
const ENV = {
  ...process.env,
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 'dev',
  GIT_AUTHOR_EMAIL: 'dev@example.com',
  GIT_COMMITTER_NAME: 'dev',
  GIT_COMMITTER_EMAIL: 'dev@example.com',
};

export const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', args, { cwd, env: ENV, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

export class TestRemote {
  readonly origin: string;
  readonly dev: string;

  constructor(
    root: string,
    readonly branch = 'main',
  ) {
    this.origin = join(root, 'origin.git');
    this.dev = join(root, 'dev');
    mkdirSync(this.origin, { recursive: true });
    git(this.origin, 'init', '--quiet', '--bare', `--initial-branch=${branch}`);
    mkdirSync(this.dev, { recursive: true });
    git(this.dev, 'init', '--quiet', `--initial-branch=${branch}`);
    git(this.dev, 'remote', 'add', 'origin', this.origin);
  }

  /** Writes files, commits and pushes the target branch; returns the new head. */
  commit(files: Record<string, string>, message = 'change'): string {
    for (const [name, content] of Object.entries(files)) {
      mkdirSync(dirname(join(this.dev, name)), { recursive: true });
      writeFileSync(join(this.dev, name), content);
    }
    git(this.dev, 'add', '--all');
    git(this.dev, 'commit', '--quiet', '-m', message);
    git(this.dev, 'push', '--quiet', 'origin', `HEAD:refs/heads/${this.branch}`);
    return git(this.dev, 'rev-parse', 'HEAD');
  }

  ref(ref: string): string | null {
    try {
      return git(this.origin, 'rev-parse', '--verify', '--quiet', ref);
    } catch {
      return null;
    }
  }

  refCount(): number {
    return git(this.origin, 'for-each-ref').split('\n').filter(Boolean).length;
  }
}
