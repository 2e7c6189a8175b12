import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, openSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { hostNetworkEnvironment } from '@caseloop/target-repositories';

export const SERVICE_NAMES = [
  'intake',
  'coordinator',
  'worker',
  'lease',
  'evidence',
  'monitor',
  'console',
] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

export const ROOT = join(__dirname, '..', '..', '..');

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() =>
        addr && typeof addr === 'object' ? resolve(addr.port) : reject(new Error('no free port')),
      );
    });
  });
}

/** Every live descendant of `root`, read from /proc (Linux). */
function descendants(root: number): number[] {
  const parentOf = new Map<number, number>();
  let entries: string[] = [];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    try {
      // The command name (field 2) may hold spaces and parentheses: the parent pid follows its last ')'.
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parentOf.set(Number(name), ppid);
    } catch {
      // Exited while we looked.
    }
  }
  const found: number[] = [];
  let frontier = [root];
  while (frontier.length) {
    const next: number[] = [];
    for (const [pid, ppid] of parentOf) if (frontier.includes(ppid)) next.push(pid);
    found.push(...next);
    frontier = next;
  }
  return found;
}

function newestSource(dir: string): number {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) newest = Math.max(newest, newestSource(p));
    else if (e.name.endsWith('.ts')) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

/**
 * How to run a service: its build under `dist/` when that build is newer than every source it
 * could include (a stale build never answers for newer code), otherwise the sources through swc.
 */
export function serviceCommand(name: ServiceName, root = ROOT): string[] {
  const built = join(root, 'dist', 'services', name, 'src', 'main.js');
  if (existsSync(built)) {
    const at = statSync(built).mtimeMs;
    if (at >= newestSource(join(root, 'libs')) && at >= newestSource(join(root, 'services'))) return [built];
  }
  return ['-r', '@swc-node/register', join('services', name, 'src', 'main.ts')];
}

export type ExitInfo = { code: number | null; signal: NodeJS.Signals | null };

/**
 * A service could not have its port: its start failed to bind it (EADDRINUSE), or another process
 * answers on it. That other process is never taken for the service.
 */
export class PortTakenError extends Error {
  constructor(
    readonly service: ServiceName,
    readonly port: number,
    detail: string,
  ) {
    super(`${service}: port ${port} is held by another process (${detail})`);
    this.name = 'PortTakenError';
  }
}

/** One service as its own OS process, its output appended to a log file, its readiness read from /healthz. */
export class ServiceProcess {
  private child: ChildProcess | null = null;
  private exited: Promise<ExitInfo> = Promise.resolve({ code: null, signal: null });
  private lastExit: ExitInfo | null = null;
  /** Where this start's output begins in the log file (earlier starts wrote before it). */
  private logStart = 0;
  /** The marker of the current start (CASELOOP_INSTANCE_ID), repeated by its `/healthz`. */
  instanceId: string | null = null;
  starts = 0;

  constructor(
    readonly name: ServiceName,
    readonly port: number,
    readonly logFile: string,
    readonly env: Record<string, string>,
    private readonly root = ROOT,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  start(): void {
    if (this.running) throw new Error(`${this.name} is already running`);
    const fd = openSync(this.logFile, 'a');
    const instanceId = randomBytes(8).toString('hex');
    try {
      this.logStart = statSync(this.logFile).size;
      const child = spawn(process.execPath, serviceCommand(this.name, this.root), {
        cwd: this.root,
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: process.env.HOME ?? '/tmp',
          ...(process.env.LANG ? { LANG: process.env.LANG } : {}),
          // The host's CA, proxy and registry settings: the worker and evidence pass them on to a
          // repository's setup steps, whose install must reach its registry from this machine.
          ...hostNetworkEnvironment(process.env),
          SWC_NODE_PROJECT: join(this.root, 'tsconfig.json'),
          HTTP_HOST: '127.0.0.1',
          HTTP_PORT: String(this.port),
          ...this.env,
          // stdin is a pipe this process holds: when this process dies (SIGKILL included) the pipe
          // closes and the service stops with it, leaving no orphan behind
          CASELOOP_EXIT_WITH_PARENT: '1',
          // Readiness is taken only from the process that repeats this marker on /healthz.
          CASELOOP_INSTANCE_ID: instanceId,
        },
        stdio: ['pipe', fd, fd],
      });
      // The pipe alone does not keep this process running.
      (child.stdin as (NodeJS.WritableStream & { unref?: () => void }) | null)?.unref?.();
      child.stdin?.on('error', () => undefined);
      this.child = child;
      this.instanceId = instanceId;
      this.lastExit = null;
      this.starts++;
      this.exited = new Promise((resolve) =>
        child.once('exit', (code, signal) => {
          this.lastExit = { code, signal };
          resolve({ code, signal });
        }),
      );
    } finally {
      closeSync(fd);
    }
  }

  /**
   * Polls `/healthz` until this start's own process says it is ready (it repeats the instance
   * marker); fails early, with its log tail, if it exits. A PortTakenError when the port is not its
   * own: another process answers there (the service is stopped then: it could not bind the port), or
   * the service exited failing to bind it.
   */
  async waitReady(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = 'no answer';
    while (Date.now() < deadline) {
      if (this.lastExit) {
        const output = this.logTail(4_000, this.logStart);
        if (/\bEADDRINUSE\b/.test(output))
          throw new PortTakenError(this.name, this.port, `the service failed to bind it:\n${output}`);
        throw new Error(
          `${this.name} exited (${this.lastExit.code ?? this.lastExit.signal}) before ready:\n${output}`,
        );
      }
      let answer: { status: number; text: string } | null = null;
      try {
        const res = await fetch(`${this.url}/healthz`, { signal: AbortSignal.timeout(2_000) });
        answer = { status: res.status, text: await res.text() };
      } catch (e) {
        last = (e as Error).message;
      }
      if (answer) {
        let body: { status?: string; instance?: string } = {};
        try {
          body = JSON.parse(answer.text) as typeof body;
        } catch {
          // Not a service of ours: its answer is reported as it came.
        }
        if (!this.lastExit && body.instance !== this.instanceId) {
          // Our service answers only once it has bound the port, with its marker: whoever answers
          // without it holds the port, and our service cannot bind it.
          await this.stop(5_000);
          throw new PortTakenError(
            this.name,
            this.port,
            `its /healthz answered ${answer.status} ${answer.text.slice(0, 300)}, not the ${this.name} started here (instance ${this.instanceId})`,
          );
        }
        if (answer.status === 200 && body.status === 'ready') return;
        last = `${answer.status} ${answer.text.slice(0, 300)}`;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`${this.name} not ready after ${timeoutMs} ms (${last}):\n${this.logTail()}`);
  }

  /**
   * Signals the service. SIGKILL takes its whole process tree with it (the app servers and browsers it
   * started in their own process groups), as a crashed container would: nothing it started survives it.
   */
  kill(signal: NodeJS.Signals): Promise<ExitInfo> {
    if (!this.running) return Promise.resolve(this.lastExit ?? { code: null, signal: null });
    const tree = signal === 'SIGKILL' && this.child?.pid ? descendants(this.child.pid) : [];
    this.child?.kill(signal);
    for (const pid of tree) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    return this.exited;
  }

  /** SIGTERM, then SIGKILL once `graceMs` has passed. */
  async stop(graceMs = 15_000): Promise<ExitInfo> {
    if (!this.running) return this.lastExit ?? { code: null, signal: null };
    const exit = this.kill('SIGTERM');
    const timer = setTimeout(() => this.child?.kill('SIGKILL'), graceMs);
    try {
      return await exit;
    } finally {
      clearTimeout(timer);
    }
  }

  /** The end of the log (from byte `from`: this start's output only). */
  logTail(chars = 4_000, from = 0): string {
    try {
      return readFileSync(this.logFile).subarray(from).toString('utf8').slice(-chars);
    } catch {
      return '';
    }
  }
}
