import { ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '@caseloop/testing';
import { connect } from 'nats';

export const USERS = [
  'provisioner',
  'audit',
  'intake',
  'coordinator',
  'worker',
  'lease',
  'evidence',
  'monitor',
  'console',
] as const;
export type NatsUser = (typeof USERS)[number];

export interface RestrictedNats {
  url: string;
  password(user: NatsUser): string;
  /** Kills the server, keeping its store. */
  kill(): Promise<void>;
  /** Starts it again on the same port and store. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/**
 * A second nats-server of our own running deploy/nats/nats.conf, with its own port and store and
 * without the monitoring port (the store directory and port are given with -sd / -p); passwords come from the environment exactly as in production
 * (random ones unless given).
 */
export async function startRestrictedNats(
  options: { passwords?: Partial<Record<NatsUser, string>> } = {},
): Promise<RestrictedNats> {
  const dir = await mkdtemp(join(tmpdir(), 'caseloop-nats-'));
  // Port, store and monitoring come from the command line here; everything else is the deploy file.
  const conf = (await readFile(join(__dirname, 'nats.conf'), 'utf8'))
    .replace(/^http_port:.*$/m, '')
    .replace(/^\s*store_dir:.*$/m, '');
  const confPath = join(dir, 'nats.conf');
  await writeFile(confPath, conf);
  const port = await freePort();
  const passwords = Object.fromEntries(
    USERS.map((u) => [u, options.passwords?.[u] ?? `pw-${u}-${Math.random().toString(36).slice(2)}`]),
  ) as Record<NatsUser, string>;
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
  for (const u of USERS) env[`${u.toUpperCase()}_NATS_PASSWORD`] = passwords[u];
  const url = `nats://127.0.0.1:${port}`;
  let child: ChildProcess | null = null;
  let log = '';
  const launch = async () => {
    const c = spawn(
      '/usr/sbin/nats-server',
      ['-c', confPath, '-a', '127.0.0.1', '-p', String(port), '-js', '-sd', join(dir, 'js')],
      {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    child = c;
    c.stderr?.on('data', (d: Buffer) => (log += d.toString()));
    c.stdout?.on('data', (d: Buffer) => (log += d.toString()));
    await eventually(
      async () => {
        if (c.exitCode !== null) throw new Error(`nats-server exited: ${log}`);
        const nc = await connect({ servers: url, user: 'audit', pass: passwords.audit, reconnect: false });
        await nc.close();
        return true;
      },
      { timeoutMs: 20_000, intervalMs: 100, what: 'restricted nats-server up' },
    );
  };
  const kill = async () => {
    const c = child;
    if (!c || c.exitCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGTERM');
    await exited;
  };
  await launch();
  return {
    url,
    password: (u) => passwords[u],
    kill,
    start: launch,
    async stop() {
      await kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
