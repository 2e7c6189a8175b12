import { ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { connect, NatsConnection } from 'nats';

/** The server the cluster tier runs; override with CASELOOP_NATS_SERVER. */
export const NATS_SERVER_BIN = process.env.CASELOOP_NATS_SERVER ?? '/usr/sbin/nats-server';

/** A TCP port on loopback that nothing listens on right now (the OS picks it). */
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

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

export interface ClusterNode {
  name: string;
  port: number;
  clusterPort: number;
  monitorPort: number;
  storeDir: string;
  url: string;
}

/**
 * A JetStream cluster of real nats-server processes on loopback: own client, route and monitoring
 * ports, own store directory per node, routes to every other node. Nodes can be killed (SIGKILL,
 * as a crashed machine) and restarted on the same ports and store.
 */
export class NatsCluster {
  private readonly procs = new Map<string, ChildProcess>();

  private constructor(
    readonly dir: string,
    readonly clusterName: string,
    readonly nodes: ClusterNode[],
    private readonly logs = false,
  ) {}

  /**
   * `ports`: the first node's client, route and monitoring ports, the others count up from them
   * (the sandbox's fixed ports); without it every port is picked free. `logs`: each node writes
   * `<storeDir>.log`.
   */
  static async start(opts: {
    dir: string;
    size?: number;
    name?: string;
    ports?: { client: number; cluster: number; monitor: number };
    logs?: boolean;
  }): Promise<NatsCluster> {
    if (!existsSync(NATS_SERVER_BIN))
      throw new Error(
        `the cluster tier needs nats-server at ${NATS_SERVER_BIN} (apt-get install nats-server)`,
      );
    const size = opts.size ?? 3;
    const nodes: ClusterNode[] = [];
    const fixed = opts.ports;
    for (let i = 1; i <= size; i++) {
      const port = fixed ? fixed.client + i - 1 : await freePort();
      nodes.push({
        name: `n${i}`,
        port,
        clusterPort: fixed ? fixed.cluster + i - 1 : await freePort(),
        monitorPort: fixed ? fixed.monitor + i - 1 : await freePort(),
        storeDir: join(opts.dir, `n${i}`),
        url: `nats://127.0.0.1:${port}`,
      });
    }
    if (fixed)
      for (const n of nodes)
        for (const p of [n.port, n.clusterPort, n.monitorPort])
          if (!(await portFree(p)))
            throw new Error(`port ${p} for nats-server ${n.name} is taken (another cluster running?)`);
    const cluster = new NatsCluster(opts.dir, opts.name ?? 'caseloop', nodes, opts.logs ?? false);
    for (const n of nodes) await mkdir(n.storeDir, { recursive: true });
    for (const n of nodes) cluster.spawn(n);
    await cluster.waitHealthy(60_000);
    return cluster;
  }

  /** Every node's client URL: what services are given (they fail over between them). */
  get urls(): string[] {
    return this.nodes.map((n) => n.url);
  }

  node(name: string): ClusterNode {
    const n = this.nodes.find((x) => x.name === name);
    if (!n) throw new Error(`no node ${name}`);
    return n;
  }

  running(name: string): boolean {
    const p = this.procs.get(name);
    return !!p && p.exitCode === null && p.signalCode === null;
  }

  private spawn(n: ClusterNode): void {
    const routes = this.nodes
      .filter((o) => o !== n)
      .map((o) => `nats://127.0.0.1:${o.clusterPort}`)
      .join(',');
    const child = spawn(
      NATS_SERVER_BIN,
      [
        '-a',
        '127.0.0.1',
        '-p',
        String(n.port),
        '-m',
        String(n.monitorPort),
        '-n',
        n.name,
        '-js',
        '-sd',
        n.storeDir,
        '--cluster_name',
        this.clusterName,
        '--cluster',
        `nats://127.0.0.1:${n.clusterPort}`,
        '--routes',
        routes,
        ...(this.logs ? ['-l', `${n.storeDir}.log`] : []),
      ],
      { stdio: 'ignore' },
    );
    this.procs.set(n.name, child);
  }

  /** SIGKILL: the node vanishes without a goodbye, as a lost machine would. */
  async kill(name: string): Promise<void> {
    const p = this.procs.get(name);
    if (!p || !this.running(name)) return;
    const exited = new Promise<void>((r) => p.once('exit', () => r()));
    p.kill('SIGKILL');
    await exited;
  }

  /** Starts a stopped node again on its ports and its store. */
  async restart(name: string): Promise<void> {
    if (this.running(name)) return;
    this.spawn(this.node(name));
    await this.waitNode(this.node(name), 60_000);
  }

  /** JetStream is up on every running node and a meta leader is elected. */
  async waitHealthy(timeoutMs: number): Promise<void> {
    for (const n of this.nodes) if (this.running(n.name)) await this.waitNode(n, timeoutMs);
    // A meta leader, and in its view every other running node current and online: a node just
    // restarted is healthy on its own before the leader counts it, and until then placing an R3
    // stream fails with "no suitable peers for placement, peer offline".
    await until(timeoutMs, async () => {
      const jsz = await this.jsz(this.nodes.find((n) => this.running(n.name)) as ClusterNode);
      const leader = jsz?.meta_cluster?.leader;
      if (!leader || !this.running(leader)) return false;
      const view = (await this.jsz(this.node(leader)))?.meta_cluster;
      if (view?.leader !== leader) return false;
      return this.nodes
        .filter((n) => n.name !== leader && this.running(n.name))
        .every((n) => view.replicas?.some((r) => r.name === n.name && r.current && !r.offline));
    });
  }

  private async waitNode(n: ClusterNode, timeoutMs: number): Promise<void> {
    await until(timeoutMs, async () => {
      const res = await fetch(`http://127.0.0.1:${n.monitorPort}/healthz?js-enabled-only=true`, {
        signal: AbortSignal.timeout(2_000),
      }).catch(() => null);
      return res?.status === 200;
    });
  }

  private async jsz(n: ClusterNode): Promise<Jsz | null> {
    const res = await fetch(`http://127.0.0.1:${n.monitorPort}/jsz?streams=true`, {
      signal: AbortSignal.timeout(2_000),
    }).catch(() => null);
    return res?.ok ? ((await res.json()) as Jsz) : null;
  }

  /** The node leading a stream's raft group, as the cluster reports it (null during an election). */
  async streamLeader(stream: string, timeoutMs = 30_000): Promise<string> {
    return until(timeoutMs, async () => {
      const nc = await this.connect();
      try {
        const jsm = await nc.jetstreamManager();
        const info = await jsm.streams.info(stream);
        return info.cluster?.leader ?? null;
      } catch {
        return null;
      } finally {
        await nc.close();
      }
    });
  }

  /** A plain connection to any running node. */
  connect(name = 'caseloop-test'): Promise<NatsConnection> {
    return connect({
      servers: this.nodes.filter((n) => this.running(n.name)).map((n) => n.url),
      name,
      noAsyncTraces: true,
    });
  }

  async stop(removeStore = true): Promise<void> {
    for (const n of this.nodes) await this.kill(n.name);
    if (removeStore) await rm(this.dir, { recursive: true, force: true });
  }
}

interface Jsz {
  meta_cluster?: {
    leader?: string;
    replicas?: Array<{ name: string; current?: boolean; offline?: boolean }>;
  };
}

async function until<T>(timeoutMs: number, probe: () => Promise<T | null | false>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== null && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`nats cluster: not ready after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
