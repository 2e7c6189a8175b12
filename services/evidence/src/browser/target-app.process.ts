import { ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { hostNetworkEnvironment, packageCacheEnvironment } from '@caseloop/target-repositories';

export interface TargetAppSpec {
  /** The case worktree: the app runs the code under validation. */
  cwd: string;
  argv: string[];
  /**
   * The configured URL. Its port is replaced by a free one handed to the app as `PORT` and as
   * every `{port}` argument, unless `fixedPort` is set.
   */
  url: string;
  /** The app cannot be told its port: it must answer on this one (which must be free). */
  fixedPort?: number;
  readyPath: string | undefined;
  readyTimeoutMs: number;
  /** The only variables the app sees besides PORT: caseloop's own environment (and secrets) never leak in. */
  env: Record<string, string>;
  /**
   * The app's stdout and stderr as they come, for an operator's terminal (`caseloop repo check`
   * shows why a client exited). Without it the output is not read at all: it is not evidence and
   * may hold anything.
   */
  onOutput?: (text: string) => void;
}

export interface RunningTargetApp {
  /** Origin the app answers on, e.g. `http://127.0.0.1:40123`. */
  baseUrl: string;
  stop(): Promise<void>;
}

export class TargetAppError extends Error {
  constructor(
    readonly reason: 'spawn_failed' | 'exited' | 'not_ready',
    message: string,
  ) {
    super(message);
    this.name = 'TargetAppError';
  }
}

/** Variables a dev server legitimately needs from the host, with its CA, proxy and registry settings; everything else is dropped. */
export const HOST_ENV_ALLOWLIST = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR'] as const;

export interface AppEnvironmentOptions {
  /**
   * The package cache the repository's setup steps ran with (`packageCacheEnvironment`): a client
   * started through corepack (`corepack pnpm@9 run dev`) finds the package manager the setup
   * downloaded there instead of fetching it again into the service's own HOME.
   */
  cacheDir?: string;
  /** The repository's `env` (what its setup and checks run with, e.g. COREPACK_INTEGRITY_KEYS), under the client's own. */
  repositoryEnv?: Record<string, string>;
}

export function appEnvironment(
  host: NodeJS.ProcessEnv,
  extra: Record<string, string>,
  options: AppEnvironmentOptions = {},
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of HOST_ENV_ALLOWLIST) {
    const v = host[key];
    if (v !== undefined) env[key] = v;
  }
  // A dev server that fetches at start (or proxies an API) reaches the network as the setup did.
  return {
    ...env,
    ...hostNetworkEnvironment(host),
    ...(options.cacheDir ? packageCacheEnvironment(options.cacheDir) : {}),
    NODE_ENV: 'development',
    CI: '1',
    ...(options.repositoryEnv ?? {}),
    ...extra,
  };
}

export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, host, () => {
      const addr = srv.address();
      srv.close(() => (addr && typeof addr === 'object' ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * Starts the client from the worktree in its own process group (so a dev server's children die
 * with it), on a free loopback port, and waits until it answers 2xx — bounded by readyTimeoutMs.
 * Each case gets its own port, so one case's readiness probe can never be answered by another's app.
 */
export async function startTargetApp(spec: TargetAppSpec): Promise<RunningTargetApp> {
  const configured = new URL(spec.url);
  const host = configured.hostname === 'localhost' ? '127.0.0.1' : configured.hostname;
  let port: number;
  if (spec.fixedPort !== undefined) {
    port = spec.fixedPort;
    // Answered already: another process would pass the readiness probe for us.
    if (!(await portIsFree(host, port)))
      throw new TargetAppError('spawn_failed', `port ${port} (client.port) is already in use on ${host}`);
  } else {
    port = await freePort(host);
  }
  configured.port = String(port);
  const baseUrl = configured.origin;
  const [cmd, ...args] = spec.argv.map((a) => a.split('{port}').join(String(port)));
  if (!cmd) throw new TargetAppError('spawn_failed', 'the client start command is empty');

  let child: ChildProcess;
  try {
    child = spawn(cmd, args, {
      cwd: spec.cwd,
      env: { ...spec.env, PORT: String(port) },
      detached: true,
      // The app's output is not evidence and may hold anything: it is not kept.
      stdio: spec.onOutput ? ['ignore', 'pipe', 'pipe'] : 'ignore',
    });
    const onOutput = spec.onOutput;
    if (onOutput)
      for (const stream of [child.stdout, child.stderr])
        stream?.on('data', (b: Buffer) => onOutput(b.toString()));
  } catch (e) {
    throw new TargetAppError('spawn_failed', `cannot start ${cmd}: ${(e as Error).message}`);
  }
  let exit: string | null = null;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exit = signal ? `signal ${signal}` : `code ${code}`;
      resolve();
    });
    child.once('error', (e) => {
      exit = `error ${(e as NodeJS.ErrnoException).code ?? e.message}`;
      resolve();
    });
  });

  const stop = async (): Promise<void> => {
    if (exit !== null || child.pid === undefined) return;
    killGroup(child.pid, 'SIGTERM');
    const forced = setTimeout(() => child.pid !== undefined && killGroup(child.pid, 'SIGKILL'), 3000);
    await exited;
    clearTimeout(forced);
    // The leader may exit before its children: sweep the group once more.
    killGroup(child.pid, 'SIGKILL');
  };
  const app: RunningTargetApp = { baseUrl, stop };

  const probe = new URL(spec.readyPath ?? '/', baseUrl).toString();
  const deadline = Date.now() + spec.readyTimeoutMs;
  // The last answer that was not 2xx: the app listens, but readyPath is not a page it serves.
  let answered: string | null = null;
  for (;;) {
    if (exit !== null) {
      if (child.pid !== undefined) killGroup(child.pid, 'SIGKILL');
      throw new TargetAppError('exited', `the client exited before answering (${exit})`);
    }
    const answer = await probeOnce(probe);
    if (answer === 'ready') return app;
    if (answer !== null) answered = answer;
    if (Date.now() > deadline) {
      await stop();
      throw new TargetAppError(
        'not_ready',
        answered !== null
          ? `the client listens but answered ${probe} with ${answered}, never 2xx, within ${spec.readyTimeoutMs} ms: set readyPath (and the flow's goto) to a path it serves${/^3/.test(answered) ? ', e.g. where it redirects' : ''}`
          : spec.fixedPort !== undefined
            ? `the client did not answer ${probe} within ${spec.readyTimeoutMs} ms (client.port says it listens on ${port})`
            : `the client did not answer ${probe} within ${spec.readyTimeoutMs} ms (it must listen on $PORT or the {port} argument; set client.port if it cannot be told)`,
      );
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

function portIsFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, host, () => srv.close(() => resolve(true)));
  });
}

/**
 * `ready` on 2xx; otherwise the status (with a redirect's target path) of an app that answers, or
 * null when nothing answers yet.
 */
async function probeOnce(url: string): Promise<'ready' | string | null> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(1000), redirect: 'manual' });
    await res.arrayBuffer();
    if (res.status >= 200 && res.status < 300) return 'ready';
    const location = res.headers.get('location');
    let to = '';
    if (location) {
      try {
        to = ` to ${new URL(location, url).pathname.slice(0, 200)}`;
      } catch {
        // Not a URL: the status says enough.
      }
    }
    return `${res.status}${to}`;
  } catch {
    return null;
  }
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}
