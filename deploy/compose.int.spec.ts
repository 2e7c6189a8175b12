import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parse } from 'yaml';
import { z } from 'zod';
import { ConfigDefinition } from '@caseloop/platform';
import { coordinatorConfig } from '../services/coordinator/src/coordinator.config';
import { evidenceConfig } from '../services/evidence/src/evidence.config';
import { intakeConfig } from '../services/intake/src/intake.config';
import { leaseConfig } from '../services/lease/src/lease.config';
import { monitorConfig } from '../services/monitor/src/monitor.config';
import { workerConfig } from '../services/worker/src/worker.config';
import { consoleConfig } from '../services/console/src/console.config';
import { coordinatorConfigSchema } from '../services/coordinator/src/coordinator.config';
import { loadSettings } from '../services/coordinator/src/coordinator.settings';
import { loadBindingFile } from '../services/intake/src/binding/binding.loader';
import { loadRoutesFile } from '../services/worker/src/runtimes/routes.loader';
import { loadRepositoriesFile } from '@caseloop/target-repositories';
import { loadConsoleAccess } from '../services/console/src/auth/console-access';

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

interface ComposeService {
  image?: string;
  build?: { context: string; dockerfile: string; args?: Record<string, string> };
  environment?: Record<string, string>;
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  secrets?: string[];
  volumes?: string[];
  command?: string[];
}
interface Compose {
  services: Record<string, ComposeService>;
  secrets: Record<string, { file: string }>;
  volumes: Record<string, unknown>;
}

const compose = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as Compose;
const svc = (name: string): ComposeService => {
  const s = compose.services[name];
  if (!s) throw new Error(`docker-compose.yml has no service ${name}`);
  return s;
};

/**
 * deploy/config.sh run on copies of the example files, as an operator runs it on theirs: the files
 * each service's own configuration directory holds (paths relative to it), by service.
 */
function configScriptOnExamples(): Map<string, string[]> {
  const config = join(ROOT, 'deploy', 'config');
  const dir = mkdtempSync(join(tmpdir(), 'caseloop-config-'));
  try {
    cpSync(join(config, 'flows'), join(dir, 'flows'), { recursive: true });
    for (const f of readdirSync(config))
      if (f.endsWith('.example.yaml'))
        copyFileSync(join(config, f), join(dir, f.replace('.example.yaml', '.yaml')));
    const run = spawnSync('sh', [join(ROOT, 'deploy', 'config.sh'), dir], { encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`deploy/config.sh failed: ${run.stderr}`);
    const made = new Map<string, string[]>();
    for (const e of readdirSync(dir, { withFileTypes: true }))
      if (e.isDirectory() && e.name !== 'flows')
        made.set(
          e.name,
          readdirSync(join(dir, e.name), { recursive: true, encoding: 'utf8' })
            .filter((f) => statSync(join(dir, e.name, f)).isFile())
            .sort(),
        );
    return made;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
const madeByConfigScript = configScriptOnExamples();
const configDirs = [...madeByConfigScript.keys()].map((s) => `./deploy/config/${s}`);

/** Keys a config schema cannot do without: parsing `undefined` fails. */
const requiredKeys = (def: ConfigDefinition): string[] =>
  Object.entries(def.schema.shape as Record<string, z.ZodType>)
    .filter(([, schema]) => !schema.safeParse(undefined).success)
    .map(([k]) => k);

describe('docker-compose.yml', () => {
  it('has the infrastructure and all seven services', () => {
    expect(Object.keys(compose.services).sort()).toEqual(
      [
        'console',
        'coordinator',
        'evidence',
        'intake',
        'lease',
        'minio',
        'minio-init',
        'monitor',
        'nats',
        'postgres',
        'provision',
        'worker',
      ].sort(),
    );
  });

  it.each(SERVICES)(
    '%s: built from the one Dockerfile for itself, on its own port, after NATS and provisioning',
    (name) => {
      const s = svc(name);
      expect(s.build).toMatchObject({
        context: '.',
        dockerfile: 'deploy/Dockerfile',
        args: { SERVICE: name },
      });
      expect(existsSync(join(ROOT, s.build?.dockerfile ?? ''))).toBe(true);
      expect(existsSync(join(ROOT, 'services', name, 'src', 'main.ts'))).toBe(true);
      expect(s.ports).toHaveLength(1);
      expect(s.ports?.[0]).toMatch(/^127\.0\.0\.1:\d+:3000$/);
      expect(s.depends_on).toMatchObject({
        nats: { condition: 'service_healthy' },
        provision: { condition: 'service_completed_successfully' },
      });
    },
  );

  it('gives every service a distinct host port', () => {
    const ports = SERVICES.map((n) => svc(n).ports?.[0]);
    expect(new Set(ports).size).toBe(SERVICES.length);
  });

  it.each(SERVICES)(
    '%s: environment covers every required key of its config schema, and only keys it reads',
    (name) => {
      const def = configs[name] as ConfigDefinition;
      const env = svc(name).environment ?? {};
      const keys = Object.keys(def.schema.shape);
      const given = (k: string) =>
        env[k] !== undefined || (def.secrets.includes(k) && env[`${k}_FILE`] !== undefined);
      expect(requiredKeys(def).filter((k) => !given(k))).toEqual([]);
      const known = new Set([...keys, ...def.secrets.map((k) => `${k}_FILE`)]);
      expect(Object.keys(env).filter((k) => !known.has(k))).toEqual([]);
      // Every value written in compose must validate; values read from secret files are checked at start.
      const fromFiles = Object.keys(env)
        .filter((k) => k.endsWith('_FILE') && def.secrets.includes(k.slice(0, -5)))
        .map((k) => k.slice(0, -5));
      const issues = (
        def.schema.safeParse(Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v)]))).error
          ?.issues ?? []
      ).filter((i) => !fromFiles.includes(String(i.path[0])));
      expect(issues).toEqual([]);
    },
  );

  it.each(SERVICES)('%s: connects as its own NATS user with its password from a secret file', (name) => {
    const s = svc(name);
    expect(s.environment?.NATS_USER).toBe(name);
    expect(s.environment?.NATS_PASSWORD_FILE).toBe(`/run/secrets/${name}_nats_password`);
    expect(s.environment?.NATS_PASSWORD).toBeUndefined();
    expect(s.secrets).toContain(`${name}_nats_password`);
  });

  it('mounts every secret from a file deploy/secrets.sh creates, and defines every secret it mounts', () => {
    const script = readFileSync(join(ROOT, 'deploy', 'secrets.sh'), 'utf8');
    for (const [name, s] of Object.entries(compose.secrets)) {
      expect(s.file).toBe(`./deploy/secrets/${name}`);
      expect(script).toContain(name);
    }
    for (const s of Object.values(compose.services))
      for (const name of s.secrets ?? []) expect(compose.secrets[name]).toBeDefined();
    expect(script).toContain('caseloop_database_url');
    expect(script).toContain('discord_token');
    // Secrets never appear inline.
    for (const s of Object.values(compose.services)) {
      for (const [k, v] of Object.entries(s.environment ?? {})) {
        if (/PASSWORD|SECRET|TOKEN/.test(k) && !k.endsWith('_FILE'))
          throw new Error(`${k}=${String(v).length} chars inline`);
      }
    }
  });

  it('runs NATS with deploy/nats/nats.conf and feeds every password it references', () => {
    const nats = svc('nats');
    expect(nats.volumes).toContain('./deploy/nats/nats.conf:/etc/nats/nats.conf:ro');
    const conf = readFileSync(join(ROOT, 'deploy', 'nats', 'nats.conf'), 'utf8');
    const vars = [...conf.matchAll(/password: \$([A-Z_]+)/g)].map((m) => m[1] as string);
    expect(vars.sort()).toEqual(
      [
        'AUDIT',
        'CONSOLE',
        'COORDINATOR',
        'EVIDENCE',
        'INTAKE',
        'LEASE',
        'MONITOR',
        'PROVISIONER',
        'WORKER',
      ].map((u) => `${u}_NATS_PASSWORD`),
    );
    for (const v of vars) expect(nats.secrets).toContain(v.toLowerCase());
    // The namespace and stream in nats.conf are the ones the services use.
    expect(conf).toContain('caseloop.*.*.worker');
    expect(conf).toContain('$JS.API.DIRECT.GET.CASE_LEDGER');
    for (const n of SERVICES)
      expect(svc(n).environment).toMatchObject({
        CASELOOP_NAMESPACE: 'caseloop',
        LEDGER_STREAM: 'CASE_LEDGER',
      });
  });

  it('shares no disk between services: evidence gets code from the remote and check logs from the bucket the worker writes', () => {
    const worker = svc('worker').environment ?? {};
    const evidence = svc('evidence').environment ?? {};
    expect(worker.WORKER_S3_BUCKET).toBe(evidence.EVIDENCE_CHECK_LOG_BUCKET ?? evidence.EVIDENCE_S3_BUCKET);
    expect(worker.WORKER_S3_ENDPOINT).toBe(evidence.EVIDENCE_S3_ENDPOINT);
    // Named volumes and bind mounts alike (read-only configuration too): one service each, and no
    // bind mount holds another's directory.
    const named = new Map<string, string[]>();
    for (const [name, service] of Object.entries(compose.services ?? {}))
      for (const v of service.volumes ?? []) {
        const source = v.split(':')[0] as string;
        named.set(source, [...(named.get(source) ?? []), name]);
      }
    expect(named.size).toBeGreaterThan(5);
    for (const [volume, users] of named)
      expect({ volume, users: users.length }).toEqual({ volume, users: 1 });
    const binds = [...named.keys()].filter((s) => s.startsWith('.'));
    for (const a of binds)
      for (const b of binds) if (a !== b) expect([a, b.startsWith(`${a}/`)]).toEqual([a, false]);
    const volumeAt = (name: string, path: string) =>
      (svc(name).volumes ?? []).find((v) => v.split(':')[1] === path);
    expect(volumeAt('worker', worker.WORKER_DIR as string)).toBe('worker-data:/var/lib/caseloop');
    expect(volumeAt('evidence', evidence.EVIDENCE_DIR as string)).toBe('evidence-data:/var/lib/caseloop');
  });

  it('provisions with the provisioning user through a script the build produces', () => {
    const p = svc('provision');
    expect(p.environment).toMatchObject({
      NATS_USER: 'provisioner',
      NATS_PASSWORD_FILE: '/run/secrets/provisioner_nats_password',
    });
    expect(p.command).toEqual(['node', 'dist/scripts/provision-ledger.js']);
    expect(existsSync(join(ROOT, 'scripts', 'provision-ledger.ts'))).toBe(true);
  });

  it('declares every named volume it uses', () => {
    for (const s of Object.values(compose.services)) {
      for (const v of s.volumes ?? []) {
        const source = v.split(':')[0] as string;
        // A service's configuration directory is made by deploy/config.sh from the operator's files.
        if (source.startsWith('./deploy/config/')) expect(configDirs).toContain(source);
        else if (source.startsWith('.')) expect(existsSync(join(ROOT, source))).toBe(true);
        else expect(compose.volumes).toHaveProperty(source);
      }
    }
  });
});

/**
 * How each configuration file a service reads is parsed by that service. A file key compose sets
 * that is missing here fails the test below: a new file needs an example and its parser here.
 */
const fileParsers: Record<string, (file: string) => unknown> = {
  INTAKE_BINDING_FILE: (f) => loadBindingFile(f),
  COORDINATOR_REPOSITORIES_FILE: (f) => loadRepositoriesFile(f),
  // The coordinator checks its channel routes against the repositories file it is given beside them.
  COORDINATOR_ROUTES_FILE: (f) =>
    loadSettings(
      coordinatorConfigSchema.parse({
        COORDINATOR_ROUTES_FILE: f,
        COORDINATOR_REPOSITORIES_FILE: exampleOf(
          svc('coordinator').environment?.COORDINATOR_REPOSITORIES_FILE,
        ),
      }),
    ),
  WORKER_REPOSITORIES_FILE: (f) => loadRepositoriesFile(f),
  WORKER_ROUTES_FILE: (f) => loadRoutesFile(f),
  EVIDENCE_REPOSITORIES_FILE: (f) => loadRepositoriesFile(f),
  CONSOLE_BINDING_FILE: (f) => loadConsoleAccess(f),
};

/** `./deploy/config/<service>` mounted at `/etc/caseloop`: `/etc/caseloop/x.yaml` has its template in deploy/config/x.example.yaml. */
function exampleOf(containerPath: string | undefined): string {
  const config = (svc('coordinator').volumes ?? []).find((v) => v.startsWith('./deploy/config/'));
  const target = config?.split(':')[1] ?? '/etc/caseloop';
  if (!containerPath?.startsWith(`${target}/`)) throw new Error(`${containerPath} is not under ${target}`);
  return join(
    ROOT,
    'deploy',
    'config',
    containerPath.slice(target.length + 1).replace(/\.yaml$/, '.example.yaml'),
  );
}

/** The non-secret files a service is pointed at (secrets are files under /run/secrets). */
const fileKeys = (name: string): [string, string][] =>
  Object.entries(svc(name).environment ?? {}).filter(
    ([k, v]) => k.endsWith('_FILE') && !String(v).startsWith('/run/secrets/'),
  );

describe('the configuration files compose mounts', () => {
  it.each(SERVICES)(
    '%s: every file it reads is in a mounted directory, with an example in deploy/config that it accepts',
    async (name) => {
      const mounts = (svc(name).volumes ?? []).map((v) => v.split(':')[1] as string);
      for (const [key, path] of fileKeys(name)) {
        expect([key, mounts.some((m) => path.startsWith(`${m}/`))]).toEqual([key, true]);
        const parse = fileParsers[key];
        if (!parse) throw new Error(`${key}: no parser known to this test; add its example and parser`);
        const example = exampleOf(path);
        expect([key, existsSync(example)]).toEqual([key, true]);
        await Promise.resolve(parse(example));
      }
    },
  );

  it.each(SERVICES)(
    '%s: deploy/config.sh gives it exactly the files it reads, in a directory compose mounts into it alone',
    (name) => {
      const files = fileKeys(name);
      const mounts = (svc(name).volumes ?? []).filter((v) => v.startsWith('./deploy/config'));
      if (files.length === 0) {
        expect(mounts).toEqual([]);
        expect(madeByConfigScript.has(name)).toBe(false);
        return;
      }
      expect(mounts).toEqual([`./deploy/config/${name}:/etc/caseloop:ro`]);
      const expected = files.map(([, path]) => relative('/etc/caseloop', path));
      // The evidence service also runs the client flows its repositories name (relative to that file).
      if (name === 'evidence')
        for (const r of loadRepositoriesFile(exampleOf(svc(name).environment?.EVIDENCE_REPOSITORIES_FILE))
          .repositories)
          if (r.client) expected.push(relative(join(ROOT, 'deploy', 'config'), r.client.flow));
      expect(madeByConfigScript.get(name)).toEqual([...new Set(expected)].sort());
    },
  );

  it('makes a configuration directory only for services compose mounts one into', () => {
    const mounted = Object.values(compose.services).flatMap((s) =>
      (s.volumes ?? []).map((v) => v.split(':')[0] as string).filter((v) => v.startsWith('./deploy/config/')),
    );
    expect([...configDirs].sort()).toEqual([...mounted].sort());
  });

  it.each(SERVICES)('%s: every secret file it is pointed at is a secret compose mounts into it', (name) => {
    for (const [key, v] of Object.entries(svc(name).environment ?? {})) {
      const secret = /^\/run\/secrets\/(.+)$/.exec(String(v))?.[1];
      if (secret) expect([key, svc(name).secrets?.includes(secret)]).toEqual([key, true]);
    }
  });

  it('gives the coordinator the repositories and channel routes (without them no report has an owner)', () => {
    const env = svc('coordinator').environment ?? {};
    expect(env.COORDINATOR_REPOSITORIES_FILE).toBe(svc('worker').environment?.WORKER_REPOSITORIES_FILE);
    expect(env.COORDINATOR_REPOSITORIES_FILE).toBe(svc('evidence').environment?.EVIDENCE_REPOSITORIES_FILE);
    expect(env.COORDINATOR_ROUTES_FILE).toBeDefined();
    expect(env.COORDINATOR_ROUTES_FILE).not.toBe(svc('worker').environment?.WORKER_ROUTES_FILE);
  });

  it('routes every channel of the example binding to a repository of the example repositories', async () => {
    const env = svc('coordinator').environment ?? {};
    const binding = await loadBindingFile(exampleOf(svc('intake').environment?.INTAKE_BINDING_FILE));
    const settings = fileParsers.COORDINATOR_ROUTES_FILE?.(exampleOf(env.COORDINATOR_ROUTES_FILE)) as {
      routes: { channelId: string; repository: string | null; owner: string | null }[];
    };
    expect(settings.routes.map((r) => r.channelId).sort()).toEqual(binding.channels.map((c) => c.id).sort());
    for (const r of settings.routes) expect(r.repository && r.owner).toBeTruthy();
    // Flows named by the repositories example exist (resolved relative to the file, as the services do).
    for (const r of loadRepositoriesFile(exampleOf(env.COORDINATOR_REPOSITORIES_FILE)).repositories)
      if (r.client) expect([r.client.flow, existsSync(r.client.flow)]).toEqual([r.client.flow, true]);
  });

  it('mounts into the worker every provider credential file the example agent routes name', () => {
    const worker = svc('worker');
    const routes = loadRoutesFile(exampleOf(worker.environment?.WORKER_ROUTES_FILE));
    for (const route of [routes.normal, routes.escalation]) {
      for (const file of Object.values(route?.providerCredentialFiles ?? {})) {
        const secret = /^\/run\/secrets\/([a-z0-9_]+)$/.exec(file)?.[1];
        expect([file, secret && worker.secrets?.includes(secret)]).toEqual([file, true]);
      }
    }
  });
});

describe('deploy/Dockerfile', () => {
  const dockerfile = readFileSync(join(ROOT, 'deploy', 'Dockerfile'), 'utf8');
  const build = JSON.parse(readFileSync(join(ROOT, 'tsconfig.build.json'), 'utf8')) as {
    include: string[];
    compilerOptions: { rootDir: string };
  };
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };

  it('builds on the Node.js of .nvmrc (bookworm-slim) with npm ci and the build script', () => {
    const node = readFileSync(join(ROOT, '.nvmrc'), 'utf8').trim();
    expect(dockerfile).toMatch(
      new RegExp(`^ARG NODE_IMAGE=node:${node.replace(/\./g, '\\.')}-bookworm-slim$`, 'm'),
    );
    expect(dockerfile).toMatch(/^RUN npm ci /m);
    expect(dockerfile).toMatch(/^RUN npm run build /m);
    expect(pkg.scripts.build).toContain('tsc -p tsconfig.build.json');
  });

  it('copies only paths that exist, and everything the build compiles', () => {
    const sources = [...dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((m) =>
      (m[1] as string).split(/\s+/),
    );
    for (const s of sources) expect([s, existsSync(join(ROOT, s))]).toEqual([s, true]);
    for (const pattern of build.include) expect(sources).toContain(pattern.split('/')[0]);
  });

  it('starts dist/services/$SERVICE/src/main.js, which the build emits from services/<name>/src/main.ts', () => {
    expect(build.compilerOptions.rootDir).toBe('.');
    expect(dockerfile).toContain('exec node dist/services/$SERVICE/src/main.js');
    for (const s of SERVICES) expect(existsSync(join(ROOT, 'services', s, 'src', 'main.ts'))).toBe(true);
  });

  it('runs as a non-root user and takes the service as a build argument', () => {
    expect(dockerfile).toMatch(/^ARG SERVICE$/m);
    expect(dockerfile).toMatch(/^USER node$/m);
  });
});
