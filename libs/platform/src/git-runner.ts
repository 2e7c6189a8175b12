import { spawn } from 'node:child_process';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { clearStaleGitLock, heldGitLock, MAX_STALE_GIT_LOCKS, StaleGitLockPolicy } from './git-locks';
import { HeadTailBuffer } from './head-tail.buffer';

/** `git_locked`: another git holds a lock file in the repository (retry later; never a blocker). */
export type GitErrorCode = 'git_failed' | 'git_timeout' | 'git_unavailable' | 'git_locked';

export class GitError extends Error {
  constructor(
    readonly code: GitErrorCode,
    /** The git subcommand (never its arguments: they may hold paths of other cases). */
    readonly subcommand: string,
    readonly exitCode: number | null,
    readonly stderrTail: string,
  ) {
    super(
      `git ${subcommand} ${code === 'git_timeout' ? 'timed out' : code === 'git_locked' ? 'found the repository locked' : `failed (exit ${exitCode ?? 'none'})`}: ${stderrTail.trim().slice(-500)}`,
    );
    this.name = 'GitError';
  }
}

export interface GitRunOptions {
  cwd: string;
  /** A file with `token` or `username:token`; handed to the askpass helper, never to the command line. */
  credentialsFile?: string | undefined;
  timeoutMs?: number;
  /** Non-zero exits resolve instead of throwing (for `diff --quiet`, `rebase`). */
  allowFailure?: boolean;
  /** Streams stdout here instead of collecting it (for hashing big diffs). */
  onStdout?: (chunk: Buffer) => void;
}

export interface GitResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/**
 * Answers git's "Username for …" / "Password for …" prompts from the credentials file named in
 * CASELOOP_GIT_CREDENTIALS_FILE. Only git processes get that variable, so the secret never sits in a
 * URL, a command line, a log line or an agent's environment.
 */
const ASKPASS = `#!/bin/sh
f="$CASELOOP_GIT_CREDENTIALS_FILE"
if [ -z "$f" ] || [ ! -r "$f" ]; then exit 1; fi
line=$(head -n 1 "$f" | tr -d '\\r')
case "$line" in
  *:*) user=\${line%%:*}; secret=\${line#*:} ;;
  *) user=x-access-token; secret=$line ;;
esac
case "$1" in
  Username*) printf '%s\\n' "$user" ;;
  *) printf '%s\\n' "$secret" ;;
esac
`;

/** Writes the askpass helper into a directory only the service can read. */
export async function installAskpass(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, 'git-askpass.sh');
  await writeFile(path, ASKPASS, { mode: 0o700 });
  await chmod(path, 0o700);
  return path;
}

/** Collected stdout beyond this fails the command (git is killed): a cut output is never handed back as whole. */
const MAX_STDOUT = 32 * 1024 * 1024;

interface Spawned {
  exitCode: number;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  overflowed: boolean;
}

/**
 * git, spawned with an argument vector (never a shell) in a process group of its own, with prompts
 * disabled, no system or global configuration, hooks off, and credentials only through the askpass
 * helper. At its timeout the whole group is killed (a `git-remote-https` or `ssh` too).
 */
export class Git {
  constructor(
    private readonly opts: {
      askpassPath: string;
      /** PATH comes from here; nothing else of the service's environment reaches git. */
      inheritedEnv: Readonly<Record<string, string | undefined>>;
      defaultTimeoutMs?: number;
      /** Lock files a dead git left in the service's own directories: removed once stale (see StaleGitLockPolicy). */
      staleLocks?: StaleGitLockPolicy;
    },
  ) {}

  private env(credentialsFile: string | undefined): Record<string, string> {
    const env: Record<string, string> = {
      PATH: this.opts.inheritedEnv.PATH ?? '/usr/local/bin:/usr/bin:/bin',
      LANG: 'C',
      LC_ALL: 'C',
      HOME: '/nonexistent',
      GIT_TERMINAL_PROMPT: '0',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_ASKPASS: this.opts.askpassPath,
      GIT_SSH_COMMAND: 'ssh -o BatchMode=yes',
      GIT_AUTHOR_NAME: 'caseloop',
      GIT_AUTHOR_EMAIL: 'caseloop@localhost',
      GIT_COMMITTER_NAME: 'caseloop',
      GIT_COMMITTER_EMAIL: 'caseloop@localhost',
    };
    if (credentialsFile) env.CASELOOP_GIT_CREDENTIALS_FILE = credentialsFile;
    return env;
  }

  async run(args: readonly string[], options: GitRunOptions): Promise<GitResult> {
    const subcommand = args.find((a) => !a.startsWith('-') && !a.includes('=')) ?? 'git';
    let r = await this.spawn(args, options, subcommand);
    // A dead git may have left more than one lock (index and HEAD): each is cleared in turn.
    for (let cleared = 0; cleared < MAX_STALE_GIT_LOCKS; cleared++) {
      const lock = r.exitCode !== 0 && !r.timedOut ? heldGitLock(r.stderr, options.cwd) : undefined;
      if (lock === undefined) break;
      const verdict = await clearStaleGitLock(lock, this.opts.staleLocks);
      if (verdict === 'held') throw new GitError('git_locked', subcommand, r.exitCode, r.stderr);
      if (verdict === 'foreign') break;
      r = await this.spawn(args, options, subcommand);
    }
    if (r.timedOut) throw new GitError('git_timeout', subcommand, null, r.stderr);
    if (r.overflowed)
      throw new GitError(
        'git_failed',
        subcommand,
        null,
        `${r.stderr.trimEnd()}\nits output exceeded ${MAX_STDOUT} bytes`,
      );
    if (r.exitCode !== 0 && !options.allowFailure)
      throw new GitError('git_failed', subcommand, r.exitCode, r.stderr);
    return { exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr };
  }

  private spawn(args: readonly string[], options: GitRunOptions, subcommand: string): Promise<Spawned> {
    const timeoutMs = options.timeoutMs ?? this.opts.defaultTimeoutMs ?? 120_000;
    return new Promise((resolve, reject) => {
      const child = spawn('git', ['-c', 'core.hooksPath=/dev/null', ...args], {
        cwd: options.cwd,
        env: this.env(options.credentialsFile),
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const out: Buffer[] = [];
      let outBytes = 0;
      const err = new HeadTailBuffer(16 * 1024);
      let timedOut = false;
      let overflowed = false;
      const killGroup = () => {
        try {
          process.kill(-(child.pid as number), 'SIGKILL');
        } catch {
          // already gone
        }
      };
      const timer = setTimeout(() => {
        timedOut = true;
        killGroup();
      }, timeoutMs);
      child.stdout.on('data', (c: Buffer) => {
        if (options.onStdout) return options.onStdout(c);
        if (overflowed) return;
        outBytes += c.length;
        if (outBytes <= MAX_STDOUT) return void out.push(c);
        overflowed = true;
        out.length = 0;
        killGroup();
      });
      child.stderr.on('data', (c: Buffer) => err.push(c));
      child.on('error', (e: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        reject(new GitError('git_unavailable', subcommand, null, `${e.code ?? 'error'}`));
      });
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({
          exitCode: code ?? -1,
          stdout: Buffer.concat(out).toString('utf8'),
          stderr: err.toString(),
          timedOut,
          overflowed,
        });
      });
    });
  }
}
