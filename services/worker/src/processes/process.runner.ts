import { spawn } from 'node:child_process';
import { HeadTailBuffer } from '@caseloop/platform';
import { ProcessGroups } from './process-groups';

export interface ProcessSpec {
  /** Program and arguments. Never a shell string: nothing is interpreted by `sh`. */
  argv: readonly string[];
  cwd: string;
  /** The complete environment of the child: nothing is inherited implicitly. */
  env: Readonly<Record<string, string>>;
  timeoutMs: number;
  stdin?: string;
  /** Between SIGTERM and SIGKILL of the process group after a timeout. */
  killGraceMs?: number;
  /** Bytes kept per stream (head + tail). */
  outputLimitBytes?: number;
  /** Bytes kept of the interleaved stream, when it must hold more than each stream alone (a check's whole log). */
  combinedLimitBytes?: number;
  /** Sees all of stdout as it arrives (a runtime's usage report), whatever the buffers keep. */
  onStdout?: (chunk: Buffer) => void;
  /** Tracks the group while it runs, so a shutting-down worker can kill it. */
  groups?: ProcessGroups;
}

export interface ProcessResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  durationMs: number;
  /** Set when the program could not be started at all (ENOENT, EACCES, a missing cwd). */
  spawnError: string | null;
  stdout: HeadTailBuffer;
  stderr: HeadTailBuffer;
  /** stdout and stderr interleaved in arrival order. */
  combined: HeadTailBuffer;
}

const DEFAULT_LIMIT = 64 * 1024;

const killGroup = (pid: number | undefined, signal: NodeJS.Signals): void => {
  if (!pid) return;
  try {
    // A negative pid addresses the whole process group the child leads (it was spawned detached).
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
};

/**
 * Runs one program in its own process group. On timeout the whole group gets SIGTERM, then SIGKILL
 * after a grace period, so grandchildren (a test runner's workers, a `sleep` in the background) die
 * with it. After a normal exit, stragglers left in the group are killed too: nothing outlives its run.
 */
export function runProcess(spec: ProcessSpec): Promise<ProcessResult> {
  const limit = spec.outputLimitBytes ?? DEFAULT_LIMIT;
  const stdout = new HeadTailBuffer(limit);
  const stderr = new HeadTailBuffer(limit);
  const combined = new HeadTailBuffer(spec.combinedLimitBytes ?? limit);
  const started = Date.now();
  const [program, ...args] = spec.argv;
  if (!program) return Promise.reject(new Error('runProcess needs a program'));

  return new Promise((resolve) => {
    let timedOut = false;
    let spawnError: string | null = null;
    let exitCode: number | null = null;
    let signal: NodeJS.Signals | null = null;
    let settled = false;
    const timers: NodeJS.Timeout[] = [];

    const child = spawn(program, args, {
      cwd: spec.cwd,
      env: { ...spec.env },
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
      windowsHide: true,
    });

    if (child.pid) spec.groups?.add(child.pid);

    const finish = (): void => {
      if (settled) return;
      settled = true;
      if (child.pid) spec.groups?.delete(child.pid);
      timers.forEach(clearTimeout);
      resolve({
        exitCode,
        signal,
        timedOut,
        durationMs: Date.now() - started,
        spawnError,
        stdout,
        stderr,
        combined,
      });
    };

    child.stdout.on('data', (c: Buffer) => {
      spec.onStdout?.(c);
      stdout.push(c);
      combined.push(c);
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr.push(c);
      combined.push(c);
    });
    child.stdin.on('error', () => {
      // The program closed stdin early (it did not want the brief there); not an error of the run.
    });
    child.on('error', (e: NodeJS.ErrnoException) => {
      spawnError = `${e.code ?? 'error'}: cannot start ${program}`;
      finish();
    });
    child.on('exit', (code, sig) => {
      exitCode = code;
      signal = sig;
      killGroup(child.pid, 'SIGKILL');
      // A process that left the group (setsid) could hold our pipes open forever: stop waiting.
      timers.push(
        setTimeout(() => {
          child.stdout.destroy();
          child.stderr.destroy();
          finish();
        }, 2_000),
      );
    });
    child.on('close', finish);

    timers.push(
      setTimeout(() => {
        timedOut = true;
        killGroup(child.pid, 'SIGTERM');
        timers.push(setTimeout(() => killGroup(child.pid, 'SIGKILL'), spec.killGraceMs ?? 2_000));
      }, spec.timeoutMs),
    );

    if (spec.stdin !== undefined) child.stdin.end(spec.stdin);
    else child.stdin.end();
  });
}
