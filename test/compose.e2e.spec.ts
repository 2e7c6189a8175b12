import { execFile } from 'node:child_process';
import { chmod, copyFile, cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CaseView, foldCase } from '@caseloop/case-model';
import { defaultSeed, LocalDiscord } from '@caseloop/discord-sandbox';
import { connectLedger, Ledger } from '@caseloop/ledger';
import { ExampleRemote, ServiceName, ServiceProcess, SERVICE_NAMES } from '@caseloop/stack';
import { LocalS3, PG_URL, startLocalS3, uniqueSuffix } from '@caseloop/testing';
import { Client } from 'pg';
import { parse as parseYaml, stringify } from 'yaml';
import { NatsUser, RestrictedNats, startRestrictedNats, USERS } from '../deploy/nats/restricted-nats.fixture';
import { ofType, REPORTS, until } from './e2e/loop.fixture';

jest.setTimeout(600_000);

const ROOT = join(__dirname, '..');
const run = promisify(execFile);

interface ComposeService {
  command?: string[];
  entrypoint?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  secrets?: string[];
  volumes?: string[];
}
interface Compose {
  services: Record<string, ComposeService>;
  secrets: Record<string, { file: string }>;
}

/**
 * docker-compose.yml, run without Docker: each of the seven services as its own process with exactly
 * the environment, NATS user, mounted files and secrets compose gives its container. What a
 * container would see at a path is a directory of this test's own: `./deploy/config/<service>` and
 * `./deploy/secrets` are the operator's copies (each service's configuration made by deploy/config.sh
 * from the operator's files, secrets by deploy/secrets.sh itself), named volumes are directories, `/run/secrets/<name>` holds only the secrets listed for that
 * service. Hosts become loopback stand-ins: `nats` a nats-server of deploy/nats/nats.conf on its
 * own port and store, `minio` s3rver (with the bucket minio-init creates), `postgres` the local
 * Postgres (its own database), a published port the port this test gave the service. Intake is
 * pointed at the local Discord in Discord's place. Nothing else is added, so a key compose lacks
 * is a key the services lack here too.
 */
describe('docker-compose.yml, as processes', () => {
  const compose = parseYaml(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'), {
    merge: true,
  }) as Compose;
  const service = (name: string): ComposeService => {
    const s = compose.services[name];
    if (!s) throw new Error(`docker-compose.yml has no service ${name}`);
    return s;
  };
  const database = uniqueSuffix('compose');
  let dir = '';
  let nats: RestrictedNats | undefined;
  let s3: LocalS3 | undefined;
  let discord: LocalDiscord | undefined;
  let ledger: Ledger | undefined;
  let remote: ExampleRemote;
  const services = new Map<ServiceName, ServiceProcess>();
  let failed = false;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'caseloop-compose-'));
    // The operator's first step: deploy/secrets.sh, run in a copy of deploy/ so it writes beside it.
    await mkdir(join(dir, 'deploy', 'config', 'flows'), { recursive: true });
    await copyFile(join(ROOT, 'deploy', 'secrets.sh'), join(dir, 'deploy', 'secrets.sh'));
    await run('sh', [join(dir, 'deploy', 'secrets.sh')]);
    const secretsDir = join(dir, 'deploy', 'secrets');
    const secret = async (name: string, value: string) => {
      await writeFile(join(secretsDir, name), value, { mode: 0o600 });
    };
    const readSecret = (name: string) => readFile(join(secretsDir, name), 'utf8');

    // Discord: the local one, whose bot token goes where the operator puts the real one.
    discord = await LocalDiscord.start(defaultSeed());
    await secret('discord_token', discord.token);

    // MinIO: s3rver with the bucket minio-init creates; its fixed account as the MinIO root user.
    const bucket = /mc mb --ignore-existing local\/([a-z0-9.-]+)/.exec(
      (service('minio-init').entrypoint ?? []).join(' '),
    )?.[1];
    if (!bucket) throw new Error('minio-init creates no bucket');
    s3 = await startLocalS3({ dir: join(dir, 'minio'), buckets: [bucket] });
    await secret('minio_root_user', s3.accessKeyId);
    await secret('minio_root_password', s3.secretAccessKey);

    // Postgres: a database of this test's own, where the deployment's schema lives.
    const pg = new Client({ connectionString: PG_URL });
    await pg.connect();
    await pg.query(`create database "${database}"`);
    await pg.end();
    const pgUrl = new URL(PG_URL);
    const composeDbUrl = new URL(await readSecret('caseloop_database_url'));
    composeDbUrl.host = pgUrl.host;
    composeDbUrl.username = pgUrl.username;
    composeDbUrl.password = pgUrl.password;
    composeDbUrl.pathname = `/${database}`;
    await secret('caseloop_database_url', composeDbUrl.toString());

    // NATS: deploy/nats/nats.conf with the passwords the nats service's entrypoint exports from its secrets.
    const natsUsers = /for u in ([a-z ]+);/
      .exec((service('nats').entrypoint ?? []).join('\n'))?.[1]
      ?.split(' ');
    expect(natsUsers?.sort()).toEqual([...USERS].sort());
    const passwords: Partial<Record<NatsUser, string>> = {};
    for (const u of USERS) passwords[u] = (await readSecret(`${u}_nats_password`)).trim();
    nats = await startRestrictedNats({ passwords });

    // The operator's configuration: deploy/config/*.yaml, filled in for this machine.
    remote = await ExampleRemote.create({
      path: join(dir, 'remote', 'shop-cart.git'),
      source: join(ROOT, 'examples', 'shop-cart'),
    });
    const fix = join(dir, 'agent-fix');
    await cp(join(ROOT, 'examples', 'shop-cart-fix'), fix, {
      recursive: true,
      filter: (src) => !src.endsWith('README.md'),
    });
    await writeOperatorConfig(join(dir, 'deploy', 'config'), discord, remote.path, fix);
    // The operator's next step: each service's own copy of the files it reads.
    await copyFile(join(ROOT, 'deploy', 'config.sh'), join(dir, 'deploy', 'config.sh'));
    await run('sh', [join(dir, 'deploy', 'config.sh')]);

    // Ports: each service's published port is a free one here, and it listens there.
    const ports = new Map<string, string>();
    const listen = {} as Record<ServiceName, number>;
    for (const name of SERVICE_NAMES) {
      const published = /^127\.0\.0\.1:(\d+):3000$/.exec(service(name).ports?.[0] ?? '')?.[1];
      if (!published) throw new Error(`${name} publishes no port for 3000`);
      listen[name] = await freePort();
      ports.set(`127.0.0.1:${published}`, `127.0.0.1:${listen[name]}`);
    }
    const hosts: Record<string, string> = {
      'nats:4222': new URL(nats.url).host,
      'minio:9000': new URL(s3.endpoint).host,
      'postgres:5432': pgUrl.host,
    };
    const imageEnv = dockerfileEnv();

    const environment = async (name: string): Promise<Record<string, string>> => {
      const s = service(name);
      const fs = await containerFs(dir, name, s, compose);
      const env: Record<string, string> = { ...imageEnv };
      for (const [k, raw] of Object.entries(s.environment ?? {})) {
        let v = String(raw);
        if (v.startsWith('/')) v = fs(v);
        for (const [from, to] of Object.entries(hosts)) v = v.replaceAll(`//${from}`, `//${to}`);
        for (const [from, to] of ports) v = v.replaceAll(`//${from}`, `//${to}`);
        env[k] = v;
      }
      return env;
    };

    // The one-shot provisioning job, as compose runs it before any service.
    const provision = await environment('provision');
    expect(service('provision').command).toEqual(['node', 'dist/scripts/provision-ledger.js']);
    await run(process.execPath, ['-r', '@swc-node/register', 'scripts/provision-ledger.ts'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        SWC_NODE_PROJECT: join(ROOT, 'tsconfig.json'),
        ...provision,
      },
    });

    await mkdir(join(dir, 'logs'));
    for (const name of SERVICE_NAMES) {
      const env = await environment(name);
      env.HTTP_PORT = String(listen[name]);
      if (name === 'intake')
        Object.assign(env, { INTAKE_DISCORD_API_URL: discord.apiUrl, INTAKE_FAST_IDENTIFY: 'true' });
      if (name === 'console')
        Object.assign(env, {
          CONSOLE_DISCORD_API_URL: `${discord.apiUrl}/v10`,
          CONSOLE_DISCORD_AUTHORIZE_URL: `${discord.url}/oauth2/authorize`,
        });
      services.set(name, new ServiceProcess(name, listen[name], join(dir, 'logs', `${name}.log`), env));
    }
    for (const s of services.values()) s.start();
    await Promise.all([...services.values()].map((s) => s.waitReady(180_000)));

    // Read-only, as the audit user: what the ledger says.
    ledger = await connectLedger({
      servers: nats.url,
      namespace: provision.CASELOOP_NAMESPACE ?? 'caseloop',
      stream: provision.LEDGER_STREAM ?? 'CASE_LEDGER',
      name: 'compose-e2e',
      user: 'audit',
      pass: passwords.audit as string,
    });
  });

  afterEach(() => {
    const state = expect.getState();
    if (state.assertionCalls > state.numPassingAsserts) failed = true;
  });

  afterAll(async () => {
    if (failed)
      for (const s of services.values()) process.stdout.write(`--- ${s.name}\n${s.logTail(3_000)}\n`);
    await ledger?.close().catch(() => undefined);
    for (const name of [
      'console',
      'intake',
      'coordinator',
      'worker',
      'evidence',
      'lease',
      'monitor',
    ] as const)
      await services.get(name)?.stop();
    await nats?.stop();
    await s3?.close();
    await discord?.close();
    const pg = new Client({ connectionString: PG_URL });
    await pg.connect();
    await pg.query(`drop database if exists "${database}" with (force)`);
    await pg.end();
    if (dir && !failed) await rm(dir, { recursive: true, force: true });
  });

  it('mounts no volume or host directory into two services (nor one inside another)', () => {
    const users = new Map<string, string[]>();
    for (const [name, s] of Object.entries(compose.services))
      for (const v of s.volumes ?? []) {
        const source = v.split(':')[0] as string;
        users.set(source, [...(users.get(source) ?? []), name]);
      }
    expect([...users.keys()].filter((s) => s.startsWith('./deploy/config/')).length).toBeGreaterThan(0);
    expect([...users].filter(([, names]) => names.length > 1)).toEqual([]);
    const binds = [...users.keys()].filter((s) => s.startsWith('.'));
    expect(binds.flatMap((a) => binds.filter((b) => b.startsWith(`${a}/`)).map((b) => [a, b]))).toEqual([]);
  });

  it('takes a report in the bound channel to a receipt, awaiting review and approval', async () => {
    const t0 = Date.now();
    const d = discord as LocalDiscord;
    const l = ledger as Ledger;
    const mainBefore = await remote.head();
    const report = d.say({
      authorId: d.userId('alice'),
      channelId: d.channelId('bugs'),
      content: REPORTS.cartTotal,
    });
    const caseId = await until('the report routed to a case', 120_000, async () => {
      const routed = ofType((await l.store.load('source', `discord-${report.id}`)).events, 'SourceRouted').at(
        -1,
      );
      return routed?.data.caseId;
    });
    const view = async (): Promise<CaseView> =>
      foldCase((await l.store.load('case', caseId)).events) as CaseView;

    // A task, not a question: the coordinator knows the channel's repository and owner. A question
    // here is final (no reply could give it an owner), so it fails at once instead of timing out.
    const assigned = await until('a task assigned, or a question', 180_000, async () => {
      const v = await view();
      if (v.status === 'needs_info') return { question: { missing: v.missing, owner: v.owner } };
      return ofType((await l.store.load('case', caseId)).events, 'TaskAssigned')[0];
    });
    expect(assigned).not.toHaveProperty('question');

    const receipt = await until('the receipt in the thread', 400_000, () =>
      d.threads().some((t) => t.id === report.id)
        ? d.messages(report.id).find((m) => m.author.bot && m.content.includes('caseloop receipt'))
        : undefined,
    );
    expect(receipt.content).toContain('**Outcome:** PR ready');
    const events = (await l.store.load('case', caseId)).events;
    const checks = ofType(events, 'ChecksCompleted').at(-1);
    expect(checks?.data).toMatchObject({ passed: true, targetHead: mainBefore });
    const revision = checks?.data.revision as string;
    expect(receipt.content).toContain(revision);

    // The receipt's evidence link is the evidence service's published URL and serves the screenshot.
    const shot = ofType(events, 'ArtifactStored').find((a) => a.data.kind === 'screenshot');
    const link = `${services.get('evidence')?.url}/evidence/cases/${caseId}/${revision}/${shot?.data.sha256}`;
    expect(receipt.content).toContain(link);
    const res = await fetch(link);
    expect(res.status).toBe(200);
    expect(
      Buffer.from(await res.arrayBuffer())
        .subarray(1, 4)
        .toString(),
    ).toBe('PNG');

    await until('awaiting review', 120_000, async () => (await view()).status === 'awaiting_review');
    d.say({ authorId: d.userId('rita'), threadId: report.id, content: 'approve' });
    await until('approved', 120_000, async () => (await view()).status === 'approved');
    expect(await remote.branches()).toContain(`caseloop/${caseId}`);
    expect(await remote.head(`caseloop/${caseId}`)).toBe(revision);
    expect(await remote.head()).toBe(mainBefore);

    // Nobody broke the rules of the deployment on the way, and no runtime warned that it is unsupported
    // (the AWS SDK does on Node < 22: run on the Node.js of .nvmrc, as npm test does).
    for (const s of services.values()) {
      const log = s.logTail(1e9);
      expect([s.name, /Permissions Violation/i.test(log)]).toEqual([s.name, false]);
      expect([s.name, /^\(node:\d+\) \S*Warning.*$/m.exec(log)?.[0] ?? null]).toEqual([s.name, null]);
    }
    process.stdout.write(`compose as processes: report to approval in ${Date.now() - t0} ms\n`);
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** The image's own environment (deploy/Dockerfile `ENV`), beneath what compose sets. */
function dockerfileEnv(): Record<string, string> {
  const dockerfile = readFileSync(join(ROOT, 'deploy', 'Dockerfile'), 'utf8');
  const block = /^ENV ((?:.*\\\n)*.*)$/m.exec(dockerfile)?.[1] ?? '';
  const env: Record<string, string> = {};
  for (const m of block.matchAll(/([A-Z_]+)=(\S+)/g))
    if (!(m[2] as string).includes('$')) env[m[1] as string] = m[2] as string;
  return env;
}

/**
 * Where a container path of `name` lives here: under a mount, the mount's directory (bind mounts of
 * ./deploy/* are the operator's copies, named volumes are directories by name); `/run/secrets/<s>` holds copies of
 * the service's own secrets only; anything else under /var/lib/caseloop (the image's writable
 * directory) is private to the container; other paths are the image's own (/usr/bin/chromium).
 */
async function containerFs(
  dir: string,
  name: string,
  s: ComposeService,
  compose: Compose,
): Promise<(path: string) => string> {
  const container = join(dir, 'containers', name);
  const mounts: [string, string][] = [];
  for (const v of s.volumes ?? []) {
    const [source, target] = v.split(':') as [string, string];
    const host = source.startsWith('./') ? join(dir, source) : join(dir, 'volumes', source);
    if (!existsSync(host)) {
      if (source.startsWith('./'))
        throw new Error(`${name} mounts ${source}, which the operator has not made`);
      await mkdir(host, { recursive: true });
    }
    mounts.push([target, host]);
  }
  const secrets = join(container, 'run', 'secrets');
  await mkdir(secrets, { recursive: true });
  for (const secret of s.secrets ?? []) {
    const file = compose.secrets[secret]?.file;
    if (!file) throw new Error(`${name} mounts the undefined secret ${secret}`);
    await copyFile(join(dir, file), join(secrets, secret));
    await chmod(join(secrets, secret), 0o600);
  }
  mounts.push(['/run/secrets', secrets]);
  mounts.push(['/var/lib/caseloop', join(container, 'var', 'lib', 'caseloop')]);
  await mkdir(join(container, 'var', 'lib', 'caseloop'), { recursive: true });
  mounts.sort((a, b) => b[0].length - a[0].length);
  return (path) => {
    for (const [target, host] of mounts)
      if (path === target || path.startsWith(`${target}/`)) return host + path.slice(target.length);
    return path;
  };
}

/**
 * What an operator writes into deploy/config from the templates: the local Discord, the example
 * repository. The files' contents are the operator's, not compose's: paths in them (the remote, the
 * scripted agent's change) are this machine's; the flow is relative to repositories.yaml, as it would be.
 */
async function writeOperatorConfig(
  config: string,
  d: LocalDiscord,
  remote: string,
  fix: string,
): Promise<void> {
  const bugs = d.channelId('bugs');
  await writeFile(
    join(config, 'binding.yaml'),
    stringify({
      guildId: d.guildId,
      channels: [{ id: bugs, mode: 'open' }],
      reporters: [d.userId('alice')],
      reviewers: [d.userId('rita')],
      limits: { inboundMaxChars: 4000, reportsPerDayPerUser: 200, replyChunkSize: 2000 },
    }),
  );
  const npm = (script: string) => ['npm', 'run', '--silent', script];
  await copyFile(
    join(ROOT, 'examples', 'shop-cart', 'caseloop', 'flow.js'),
    join(config, 'flows', 'shop-cart.js'),
  );
  await writeFile(
    join(config, 'repositories.yaml'),
    stringify({
      repositories: [
        {
          id: 'shop-cart',
          url: remote,
          targetBranch: 'main',
          checks: [
            { name: 'lint', kind: 'lint', command: npm('lint'), timeoutMs: 60_000 },
            { name: 'focused', kind: 'focused_test', command: npm('test:focused'), timeoutMs: 120_000 },
            {
              name: 'regression',
              kind: 'regression_test',
              command: npm('test:regression'),
              timeoutMs: 120_000,
            },
          ],
          client: {
            start: ['node', 'src/server.js'],
            url: 'http://127.0.0.1:4300',
            readyPath: '/healthz',
            flow: 'flows/shop-cart.js',
            fixtureData: true,
          },
        },
      ],
    }),
  );
  await writeFile(
    join(config, 'channel-routes.yaml'),
    stringify({ channels: [{ channelId: bugs, repository: 'shop-cart', owner: 'shop-team' }] }),
  );
  await writeFile(
    join(config, 'agent-routes.yaml'),
    stringify({
      normal: { name: 'scripted', timeoutMs: 60_000, runtime: { kind: 'scripted', steps: [{ copy: fix }] } },
      escalation: null,
      maxAttempts: 3,
    }),
  );
}
