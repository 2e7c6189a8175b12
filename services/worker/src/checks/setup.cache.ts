import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { SetupStep, stepDirectory } from '@caseloop/target-repositories';

const run = promisify(execFile);

/**
 * The record of which setup steps succeeded in a worktree, and for what. It lives in the
 * worktree's own git directory (`<git-dir>/caseloop-setup.json`), never in the tree, where a
 * repository's `prettier --check .` or `eslint .` would find it; a removed worktree takes it along.
 * It is treated like installed dependencies: each entry names the ignored paths present right
 * after its step (`node_modules/`, …), and holds only while they are all still there. A reset that
 * keeps ignored files keeps it; a pristine reset (`git clean -x`, an escalation from a clean
 * tree) removes them, and setup runs again.
 */
export const SETUP_RECORD = 'caseloop-setup.json';

interface RecordEntry {
  key: string;
  /** Ignored paths right after the step, relative to the worktree (directories end with `/`). */
  witness: string[];
}

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

const gitEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', GIT_CONFIG_NOSYSTEM: '1' };

export class SetupCache {
  private location: Promise<string> | null = null;

  constructor(private readonly worktree: string) {}

  /** The worktree's git directory; the worktree itself when it is not a git worktree (a test directory). */
  private file(): Promise<string> {
    this.location ??= run('git', ['rev-parse', '--absolute-git-dir'], { cwd: this.worktree, env: gitEnv })
      .then(({ stdout }) => join(stdout.trim(), SETUP_RECORD))
      .catch(() => join(this.worktree, `.${SETUP_RECORD}`));
    return this.location;
  }

  private async read(): Promise<Record<string, RecordEntry>> {
    try {
      const parsed = JSON.parse(await readFile(await this.file(), 'utf8')) as unknown;
      return parsed && typeof parsed === 'object' ? (parsed as Record<string, RecordEntry>) : {};
    } catch {
      return {};
    }
  }

  private async write(record: Record<string, RecordEntry>): Promise<void> {
    const file = await this.file();
    await writeFile(`${file}.tmp`, JSON.stringify(record));
    await rename(`${file}.tmp`, file);
  }

  async isDone(name: string, key: string): Promise<boolean> {
    const entry = (await this.read())[name];
    if (!entry || entry.key !== key || !Array.isArray(entry.witness)) return false;
    for (const path of entry.witness) if (!(await exists(join(this.worktree, path)))) return false;
    return true;
  }

  async record(name: string, key: string): Promise<void> {
    const witness = await this.ignoredPaths();
    await this.write({ ...(await this.read()), [name]: { key, witness } });
  }

  /** A step that failed must run again next time, whatever ran before it. */
  async forget(name: string): Promise<void> {
    const current = await this.read();
    if (!(name in current)) return;
    delete current[name];
    await this.write(current);
  }

  /** What git ignores in the worktree now, directories collapsed (`node_modules/`). */
  private async ignoredPaths(): Promise<string[]> {
    try {
      const { stdout } = await run(
        'git',
        ['ls-files', '--others', '--ignored', '--exclude-standard', '--directory', '-z'],
        { cwd: this.worktree, env: gitEnv, maxBuffer: 16 * 1024 * 1024 },
      );
      return stdout.split('\0').filter(Boolean).slice(0, 1000);
    } catch {
      return [];
    }
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
