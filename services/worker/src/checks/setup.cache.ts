import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFile, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { SetupStep, stepDirectory } from '@caseloop/target-repositories';

const run = promisify(execFile);

/**
 * The record of which setup steps succeeded in a worktree, and for what. It lives in the worktree
 * itself as `.caseloop-setup.json`, excluded from git (so an attempt never commits it) and treated
 * like installed dependencies: a reset that keeps ignored files keeps it, a pristine reset
 * (`git clean -x`, an escalation from a clean tree) removes it together with `node_modules`, and
 * setup runs again. A removed worktree takes it along.
 */
export const SETUP_MARKER = '.caseloop-setup.json';

/**
 * What a step's success depends on: the step itself, and the content of its `inputs` (or, without
 * inputs, the revision). The same key means the step's result is still in the worktree.
 */
export async function setupKey(step: SetupStep, worktree: string, revision: string): Promise<string> {
  const h = createHash('sha256').update(JSON.stringify([step.command, step.cwd ?? '', step.env ?? {}]));
  if (!step.inputs?.length) return h.update(`\nrevision ${revision}`).digest('hex');
  const base = stepDirectory(worktree, step.cwd);
  for (const input of step.inputs) {
    let content: Buffer | null = null;
    try {
      content = await readFile(stepDirectory(base, input));
    } catch {
      // A missing input is part of the key too: it appearing later makes the step run again.
    }
    h.update(`\n${input} `).update(content ? createHash('sha256').update(content).digest('hex') : 'missing');
  }
  return h.digest('hex');
}

export class SetupCache {
  constructor(private readonly worktree: string) {}

  private get file(): string {
    return join(this.worktree, SETUP_MARKER);
  }

  async read(): Promise<Record<string, string>> {
    try {
      const parsed = JSON.parse(await readFile(this.file, 'utf8')) as unknown;
      return parsed && typeof parsed === 'object' ? (parsed as Record<string, string>) : {};
    } catch {
      return {};
    }
  }

  async isDone(name: string, key: string): Promise<boolean> {
    return (await this.read())[name] === key;
  }

  async record(name: string, key: string): Promise<void> {
    await this.exclude();
    const next = { ...(await this.read()), [name]: key };
    const temp = `${this.file}.tmp`;
    await writeFile(temp, JSON.stringify(next));
    await rename(temp, this.file);
  }

  /** A step that failed must run again next time, whatever ran before it. */
  async forget(name: string): Promise<void> {
    const current = await this.read();
    if (!(name in current)) return;
    delete current[name];
    await writeFile(this.file, JSON.stringify(current));
  }

  /** Adds the marker to the repository's `info/exclude` (shared by its worktrees) once. */
  private async exclude(): Promise<void> {
    let common: string;
    try {
      const { stdout } = await run('git', ['rev-parse', '--git-common-dir'], {
        cwd: this.worktree,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', GIT_CONFIG_NOSYSTEM: '1' },
      });
      common = stdout.trim();
    } catch {
      return; // Not a git worktree (a test directory): nothing can commit the marker there.
    }
    const dir = isAbsolute(common) ? common : resolve(this.worktree, common);
    const exclude = join(dir, 'info', 'exclude');
    let text = '';
    try {
      text = await readFile(exclude, 'utf8');
    } catch {
      // No exclude file yet.
    }
    if (text.split('\n').includes(`/${SETUP_MARKER}`)) return;
    await mkdir(join(dir, 'info'), { recursive: true });
    await appendFile(exclude, `${text && !text.endsWith('\n') ? '\n' : ''}/${SETUP_MARKER}\n`);
  }
}
