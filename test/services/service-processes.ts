import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { ServiceId } from '@caseloop/contracts';
import { eventually } from '@caseloop/testing';

export const ROOT = join(__dirname, '..', '..');
export const SERVICES: readonly ServiceId[] = [
  'intake',
  'coordinator',
  'worker',
  'lease',
  'evidence',
  'monitor',
  'console',
];

export interface ServiceProcess {
  name: string;
  child: ChildProcess;
  url: string;
  output: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `services/<name>/src/main.ts` as its own process and waits for its "ready" log line. */
export async function startService(name: string, env: Record<string, string>): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ['-r', '@swc-node/register', `services/${name}/src/main.ts`], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/tmp',
      HTTP_PORT: '0',
      HTTP_HOST: '127.0.0.1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  let exited: string | null = null;
  void exit.then(({ code }) => {
    exited = `${name} exited ${code}: ${out.slice(-2000)}`;
  });
  const ready = eventually(
    () => {
      if (exited) return exited;
      for (const line of out.split('\n')) {
        if (!line.startsWith('{')) continue;
        const rec = JSON.parse(line) as { msg?: string; url?: string };
        if (rec.msg === 'ready' && rec.url) return rec.url;
      }
      return null;
    },
    { timeoutMs: 60_000, intervalMs: 100, what: `${name} ready` },
  ).catch((e: unknown) => {
    child.kill('SIGKILL');
    throw e;
  });
  const url = await ready;
  if (exited || !url) throw new Error(exited ?? `${name} did not report its url`);
  return { name, child, url, output: () => out, exit };
}
