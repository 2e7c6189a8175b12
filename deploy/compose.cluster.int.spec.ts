import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { z } from 'zod';
import { atLeast } from '@caseloop/ledger';
import { ConfigDefinition } from '@caseloop/platform';
import { NATS_SERVER_BIN } from '@caseloop/testing';
import { coordinatorConfig } from '../services/coordinator/src/coordinator.config';
import { evidenceConfig } from '../services/evidence/src/evidence.config';
import { intakeConfig } from '../services/intake/src/intake.config';
import { leaseConfig } from '../services/lease/src/lease.config';
import { monitorConfig } from '../services/monitor/src/monitor.config';
import { workerConfig } from '../services/worker/src/worker.config';
import { consoleConfig } from '../services/console/src/console.config';

const ROOT = join(__dirname, '..');
const configs: Record<string, ConfigDefinition> = {
  intake: intakeConfig,
  coordinator: coordinatorConfig,
  worker: workerConfig,
  lease: leaseConfig,
  evidence: evidenceConfig,
  monitor: monitorConfig,
  console: consoleConfig,
} as Record<string, ConfigDefinition>;
const SERVICES = Object.keys(configs);
const SCALED = ['coordinator', 'worker', 'lease', 'evidence', 'monitor', 'console'];
const NODES = ['nats', 'nats-2', 'nats-3'];

/** compose's `!reset`: the override empties what the base file set. */
const RESET = Symbol('reset');
const reset = { tag: '!reset', collection: 'seq' as const, resolve: () => ({ [RESET]: true }) };
const isReset = (v: unknown): boolean => typeof v === 'object' && v !== null && RESET in v;

type Doc = Record<string, unknown>;
const load = (file: string): Doc =>
  parse(readFileSync(join(ROOT, file), 'utf8'), { merge: true, customTags: [reset] }) as Doc;

/**
 * The merge `docker compose -f a -f b` does, for the keys these files use: mappings merge key by
 * key, `volumes` merge by mount point, `ports`/`secrets` append, `entrypoint`/`command` replace,
 * `!reset` empties.
 */
function mergeService(base: Doc, over: Doc): Doc {
  const out: Doc = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    if (isReset(v)) out[k] = [];
    else if (k === 'volumes' && Array.isArray(b) && Array.isArray(v)) {
      const target = (m: string) => m.split(':')[1];
      out[k] = [...b.filter((m) => !v.some((n) => target(n) === target(m))), ...v];
    } else if ((k === 'ports' || k === 'secrets') && Array.isArray(b) && Array.isArray(v))
      out[k] = [...new Set([...b, ...v])];
    else if (k === 'entrypoint' || k === 'command' || Array.isArray(v) || typeof v !== 'object' || v === null)
      out[k] = v;
    else out[k] = { ...((b as Doc) ?? {}), ...(v as Doc) };
  }
  return out;
}

interface Service {
  image?: string;
  environment?: Record<string, string>;
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  secrets?: string[];
  volumes?: string[];
  entrypoint?: string[];
  deploy?: { replicas?: number };
}

const base = load('docker-compose.yml') as { services: Record<string, Doc>; volumes: Doc; secrets: Doc };
const override = load('deploy/compose.cluster.yml') as { services: Record<string, Doc>; volumes?: Doc };
const services: Record<string, Service> = { ...base.services } as Record<string, Service>;
for (const [name, s] of Object.entries(override.services))
  services[name] = mergeService((base.services[name] as Doc) ?? {}, s) as Service;
const volumes = { ...base.volumes, ...(override.volumes ?? {}) };
const svc = (name: string): Service => {
  const s = services[name];
  if (!s) throw new Error(`no service ${name} in docker-compose.yml + deploy/compose.cluster.yml`);
  return s;
};
const clusterConf = readFileSync(join(ROOT, 'deploy', 'nats', 'cluster.conf'), 'utf8');

describe('deploy/compose.cluster.yml over docker-compose.yml', () => {
  it('only overrides services the base file has, plus two more NATS nodes', () => {
    const added = Object.keys(override.services).filter((n) => !(n in base.services));
    expect(added.sort()).toEqual(['nats-2', 'nats-3']);
  });

  it.each(NODES)('%s: a cluster node with its own name, store volume and cluster.conf', (name) => {
    const n = svc(name);
    const tag = /^nats:(\d+\.\d+(?:\.\d+)?)/.exec(n.image ?? '')?.[1] ?? '0.0';
    // R3 needs correct concurrency checks in a cluster: nats-server >= 2.9.21 (#4320).
    expect(atLeast(tag.split('.').length === 2 ? `${tag}.0` : tag, '2.9.21')).toBe(true);
    expect(n.environment?.NATS_SERVER_NAME).toMatch(/^nats-\d$/);
    expect(n.volumes).toEqual(
      expect.arrayContaining([
        './deploy/nats/nats.conf:/etc/nats/nats.conf:ro',
        './deploy/nats/cluster.conf:/etc/nats/cluster.conf:ro',
      ]),
    );
    expect(n.entrypoint?.join(' ')).toContain('nats-server -c /etc/nats/cluster.conf');
    const store = (n.volumes ?? []).find((v) => v.endsWith(':/data/jetstream'));
    expect(store).toBeDefined();
    expect(volumes).toHaveProperty((store as string).split(':')[0] as string);
    // Every password nats.conf references reaches every node.
    for (const u of ['provisioner', 'audit', ...SERVICES]) expect(n.secrets).toContain(`${u}_nats_password`);
  });

  it('gives the nodes distinct names, stores and host ports, and routes each to all three', () => {
    expect(new Set(NODES.map((n) => svc(n).environment?.NATS_SERVER_NAME)).size).toBe(3);
    const stores = NODES.map((n) => (svc(n).volumes ?? []).find((v) => v.endsWith(':/data/jetstream')));
    expect(new Set(stores).size).toBe(3);
    const ports = NODES.flatMap((n) => svc(n).ports ?? []);
    expect(new Set(ports).size).toBe(ports.length);
    expect(clusterConf).toMatch(/^include \.\/nats\.conf$/m);
    expect(clusterConf).toMatch(/^server_name: \$NATS_SERVER_NAME$/m);
    for (const n of NODES) expect(clusterConf).toContain(`nats-route://${n}:6222`);
  });

  it('cluster.conf is a valid nats-server configuration', () => {
    if (!existsSync(NATS_SERVER_BIN)) throw new Error(`needs ${NATS_SERVER_BIN}`);
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      NATS_SERVER_NAME: 'nats-1',
    };
    for (const u of ['provisioner', 'audit', ...SERVICES]) env[`${u.toUpperCase()}_NATS_PASSWORD`] = 'x';
    const run = spawnSync(NATS_SERVER_BIN, ['-t', '-c', 'cluster.conf'], {
      cwd: join(ROOT, 'deploy', 'nats'),
      env,
      encoding: 'utf8',
    });
    expect([run.status, `${run.stdout}${run.stderr}`.trim()]).toEqual([
      0,
      'nats-server: configuration file cluster.conf is valid',
    ]);
  });

  it.each(SERVICES)('%s: connects to all three nodes', (name) => {
    const urls = (svc(name).environment?.NATS_URL ?? '').split(',');
    expect(urls.sort()).toEqual(NODES.map((n) => `nats://${n}:4222`).sort());
  });

  it.each(SCALED)('%s: two replicas, no fixed host port', (name) => {
    expect(svc(name).deploy?.replicas).toBe(2);
    expect(svc(name).ports ?? []).toEqual([]);
  });

  it('keeps one intake (one gateway session per bot token) on its host port', () => {
    expect(svc('intake').deploy?.replicas ?? 1).toBe(1);
    expect(svc('intake').ports).toHaveLength(1);
  });

  it('provisions the ledger and the lease bucket with three replicas once all nodes are healthy', () => {
    const p = svc('provision');
    expect(p.environment).toMatchObject({ LEDGER_REPLICAS: '3', NATS_USER: 'provisioner' });
    expect(p.environment?.LEASE_BUCKET).toBe(svc('lease').environment?.LEASE_BUCKET);
    expect(p.environment?.LEASE_BUCKET).toBe(svc('evidence').environment?.LEASE_BUCKET);
    for (const n of NODES) expect(p.depends_on?.[n]).toEqual({ condition: 'service_healthy' });
  });

  it.each(SERVICES)('%s: the merged environment still validates against its config schema', (name) => {
    const def = configs[name] as ConfigDefinition;
    const env = svc(name).environment ?? {};
    const known = new Set([...Object.keys(def.schema.shape), ...def.secrets.map((k) => `${k}_FILE`)]);
    expect(Object.keys(env).filter((k) => !known.has(k))).toEqual([]);
    const fromFiles = Object.keys(env)
      .filter((k) => k.endsWith('_FILE'))
      .map((k) => k.slice(0, -5));
    const issues = (
      (def.schema as z.ZodObject).safeParse(
        Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v)])),
      ).error?.issues ?? []
    ).filter((i) => !fromFiles.includes(String(i.path[0])));
    expect(issues).toEqual([]);
  });
});
