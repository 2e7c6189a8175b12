import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A fixed identity so the example's commits never depend on the machine's git configuration. */
const GIT_ENV = {
  GIT_AUTHOR_NAME: 'caseloop sandbox',
  GIT_AUTHOR_EMAIL: 'sandbox@caseloop.invalid',
  GIT_COMMITTER_NAME: 'caseloop sandbox',
  GIT_COMMITTER_EMAIL: 'sandbox@caseloop.invalid',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_TERMINAL_PROMPT: '0',
};

export async function git(cwd: string, args: string[]): Promise<string> {
  const { stdout } = await run('git', args, {
    cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...GIT_ENV },
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout.trim();
}

/**
 * The example target repository as a real git remote: a bare repository under the stack's
 * directory with `source` committed on `branch`. The worker clones it, pushes `caseloop/<caseId>`
 * to it, and never touches `branch`.
 */
export class ExampleRemote {
  private constructor(
    readonly path: string,
    readonly branch: string,
  ) {}

  static async create(options: { path: string; source: string; branch?: string }): Promise<ExampleRemote> {
    const branch = options.branch ?? 'main';
    await mkdir(options.path, { recursive: true });
    await git(options.path, ['init', '--quiet', '--bare', `--initial-branch=${branch}`]);
    const remote = new ExampleRemote(options.path, branch);
    if ((await remote.branches()).includes(branch)) return remote;
    await remote.commit('shop-cart: the example target repository', async (work) => {
      await cp(options.source, work, { recursive: true, filter: (src) => !src.includes('node_modules') });
    });
    return remote;
  }

  /** A handle on a repository that already exists (the operators' own): nothing is created or committed. */
  static existing(path: string, branch: string): ExampleRemote {
    return new ExampleRemote(path, branch);
  }

  async head(branch = this.branch): Promise<string> {
    return git(this.path, ['rev-parse', `refs/heads/${branch}`]);
  }

  async branches(): Promise<string[]> {
    const out = await git(this.path, ['for-each-ref', '--format=%(refname:short)', 'refs/heads/']);
    return out ? out.split('\n') : [];
  }

  /** Commits whatever `change` does in a fresh clone of `branch` and pushes it: a human moving the target branch. */
  async commit(message: string, change: (work: string) => Promise<void>): Promise<string> {
    const work = await mkdtemp(join(this.path, '..', '.commit-'));
    try {
      const exists = (await this.branches()).includes(this.branch);
      if (exists) {
        await git(work, ['clone', '--quiet', '--branch', this.branch, this.path, '.']);
      } else {
        await git(work, ['init', '--quiet', `--initial-branch=${this.branch}`]);
        await git(work, ['remote', 'add', 'origin', this.path]);
      }
      await change(work);
      await git(work, ['add', '--all']);
      await git(work, ['commit', '--quiet', '--allow-empty', '-m', message]);
      await git(work, ['push', '--quiet', 'origin', `HEAD:refs/heads/${this.branch}`]);
      return await git(work, ['rev-parse', 'HEAD']);
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  }

  /** Appends a line to a file on the target branch (a teammate's unrelated change). */
  async moveTarget(file = 'CHANGELOG.md', line = 'A teammate merged an unrelated change.'): Promise<string> {
    return this.commit(`docs: ${line}`, async (work) => {
      await writeFile(join(work, file), `${line}\n`, { flag: 'a' });
    });
  }
}
