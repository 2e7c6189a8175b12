import { randomBytes } from 'node:crypto';
import { chmod, cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { LocalDiscord, LocalDiscordOptions, localDiscordSeedSchema } from '@caseloop/discord-sandbox';
import { connectLedger, sourceKeyStream } from '@caseloop/ledger';
import { createProjectionDataSource, migrateProjections } from '@caseloop/projections';
import { loadRepositoriesFile } from '@caseloop/target-repositories';
import { LocalS3, startLocalS3 } from '@caseloop/testing';
import { connect } from 'nats';
import { Client } from 'pg';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { ExampleRemote } from './example-remote';
import {
  ExitInfo,
  freePort,
  PortTakenError,
  ROOT,
  SERVICE_NAMES,
  ServiceName,
  ServiceProcess,
} from './service-process';

export interface StackOptions {
  /** Everything the stack writes lives here: config files, secrets (0600), logs, the remote, worktrees, S3 objects. */
  dir: string;
  /** One URL, or several of one cluster separated by commas. */
  natsUrl?: string;
  /** Replicas of the ledger streams and the lease bucket (a JetStream cluster). */
  ledgerReplicas?: number;
  /** Postgres to hold the projections; the schema is created (and migrated) if missing. */
  databaseUrl?: string;
  /** Subject namespace and stream; the sandbox keeps `caseloop`/`CASE_LEDGER`, tests pass unique ones. */
  namespace?: string;
  stream?: string;
  dbSchema?: string;
  /** The lease service's KV bucket (also read by the evidence service). */
  leaseBucket?: string;
  /** The browser the evidence service drives; `null` makes it unavailable (the client-blocked outcome). */
  chromium?: string | null;
  /**
   * Real Discord: the bot token file and the binding file. Without them a local Discord is started
   * from `seedFile` (default: the sandbox seed with fixed ids).
   */
  discord?: { tokenFile: string; bindingFile: string; routesFile?: string };
  seedFile?: string;
  /**
   * The operators' own target repositories instead of the example: their repositories file (the
   * first repository is the one the channels route to unless `routesFile` says otherwise) and the
   * worker's agent routes. Without it the stack serves `examples/shop-cart` with its scripted fix.
   */
  target?: { repositoriesFile: string; agentRoutesFile: string; routesFile?: string };
  /**
   * With the example: what the scripted runtime does on the attempts after the first (attempt 2,
   * 3, …), e.g. the change a reviewer's revision asks for. A directory copied over the worktree or
   * a patch. Without it a later attempt changes nothing.
   */
  laterAttempts?: { copy?: string; patch?: string }[];
  /** Fixed ports (the sandbox's chat page); 0 or missing = any free port. */
  discordPort?: number;
  s3Port?: number;
  servicePorts?: Partial<Record<ServiceName, number>>;
  /** The console's port (loopback): the case pages. */
  casePagePort?: number;
  /**
   * How a service's free port is found (default: one the system hands out, then released). Tests
   * pass one that hands out a port another process holds.
   */
  pickPort?: (service: ServiceName) => Promise<number>;
  /** Extra environment per service, applied last. */
  env?: Partial<Record<ServiceName, Record<string, string>>>;
  /** Local Discord users (by name) allowed to decide (default: rita). */
  reviewers?: string[];
  /** Start only these (default: all seven). */
  services?: readonly ServiceName[];
  readyTimeoutMs?: number;
  log?: (line: string) => void;
}

export interface StackUrls {
  /** The local Discord's chat page, or null with real Discord. */
  chat: string | null;
  discordApi: string | null;
  s3: string;
  /** The console's read-only case pages: `<url>/cases`, `<url>/cases/<caseId>`. */
  casePage: string;
  services: Record<ServiceName, string>;
}

/** The handles a test or the sandbox launcher holds on a running stack. */
export interface Stack {
  dir: string;
  namespace: string;
  stream: string;
  dbSchema: string;
  leaseBucket: string;
  natsUrl: string;
  databaseUrl: string;
  discord: LocalDiscord | null;
  s3: LocalS3;
  bucket: string;
  /** The example's remote, or a handle on the first configured repository's URL. */
  remote: ExampleRemote;
  repositoryId: string;
  /** The repositories file every service reads. */
  repositoriesFile: string;
  urls: StackUrls;
  services: Record<ServiceName, ServiceProcess>;
  /** Environment for the `caseloop` CLI pointed at this stack. */
  cliEnv: Record<string, string>;
  /** Another process of a service with the same configuration (its own HTTP port and log). */
  addReplica(service: ServiceName): Promise<ServiceProcess>;
  replicas: ServiceProcess[];
  kill(service: ServiceName, signal?: NodeJS.Signals): Promise<ExitInfo>;
  restart(service: ServiceName): Promise<void>;
  stop(): Promise<void>;
}

export const REPOSITORY_ID = 'shop-cart';
export const BUCKET = 'caseloop-evidence';
const EXAMPLE = join(ROOT, 'examples', 'shop-cart');
const EXAMPLE_FIX = join(ROOT, 'examples', 'shop-cart-fix');
const SANDBOX_SEED = join(ROOT, 'libs', 'discord-sandbox', 'seed', 'sandbox.yaml');

async function secretFile(path: string, value: string): Promise<string> {
  await writeFile(path, `${value}\n`, { mode: 0o600 });
  await chmod(path, 0o600);
  return path;
}

async function loadSeed(file: string): Promise<LocalDiscordOptions> {
  const doc = parseYaml(await readFile(file, 'utf8')) as Record<string, unknown>;
  const { options, ...seed } = doc as { options?: Record<string, unknown> };
  return { ...localDiscordSeedSchema.parse(seed), ...(options ?? {}) } as LocalDiscordOptions;
}

/** The example's own checks, run by the worker in the case worktree (argument vectors, no shell). */
function repositoriesDocument(remote: string): unknown {
  const npm = (script: string) => ['npm', 'run', '--silent', script];
  return {
    repositories: [
      {
        id: REPOSITORY_ID,
        url: remote,
        targetBranch: 'main',
        checks: [
          { name: 'format', kind: 'format', command: npm('format:check'), timeoutMs: 60_000 },
          { name: 'lint', kind: 'lint', command: npm('lint'), timeoutMs: 60_000 },
          { name: 'focused', kind: 'focused_test', command: npm('test:focused'), timeoutMs: 120_000 },
          {
            name: 'regression',
            kind: 'regression_test',
            command: npm('test:regression'),
            timeoutMs: 120_000,
          },
          { name: 'build', kind: 'build', command: npm('build'), timeoutMs: 120_000 },
        ],
        client: {
          start: ['node', 'src/server.js'],
          url: 'http://127.0.0.1:4300',
          readyPath: '/healthz',
          flow: join(EXAMPLE, 'caseloop', 'flow.js'),
          fixtureData: true,
        },
      },
    ],
  };
}

/**
 * Brings up the whole system on one machine: a local Discord (unless real Discord is configured),
 * a local S3 server with its bucket, the example repository as a git remote, every service's
 * configuration, a provisioned ledger and a migrated projection schema, then the six services as
 * separate processes, each awaited on `/healthz`.
 */
/** The first repository of the operators' file, read the way the services read it (errors name the key). */
function firstRepository(file: string): { id: string; url: string; targetBranch: string } {
  const first = loadRepositoriesFile(file).repositories[0];
  if (!first) throw new Error(`${file}: no repositories`);
  return first;
}

export async function startStack(options: StackOptions): Promise<Stack> {
  const dir = resolve(options.dir);
  const target = options.target
    ? {
        repositoriesFile: resolve(options.target.repositoriesFile),
        agentRoutesFile: resolve(options.target.agentRoutesFile),
        routesFile: options.target.routesFile ? resolve(options.target.routesFile) : undefined,
      }
    : null;
  const userRepo = target ? firstRepository(target.repositoriesFile) : null;
  const repositoryId = userRepo?.id ?? REPOSITORY_ID;
  const log = options.log ?? (() => undefined);
  const natsUrl = options.natsUrl ?? 'nats://127.0.0.1:4222';
  const databaseUrl = options.databaseUrl ?? 'postgres://postgres@127.0.0.1:5432/test';
  const namespace = options.namespace ?? 'caseloop';
  const stream = options.stream ?? 'CASE_LEDGER';
  const dbSchema = options.dbSchema ?? 'caseloop';
  const leaseBucket = options.leaseBucket ?? 'caseloop-leases';
  const chromium = options.chromium === undefined ? '/usr/bin/chromium' : options.chromium;
  const config = join(dir, 'config');
  const secrets = join(dir, 'secrets');
  const logs = join(dir, 'logs');
  const workerDir = join(dir, 'worker');
  for (const d of [
    config,
    secrets,
    logs,
    workerDir,
    join(workerDir, 'worktrees'),
    join(dir, 'evidence'),
    join(dir, 's3'),
  ]) {
    await mkdir(d, { recursive: true });
  }
  await chmod(secrets, 0o700);

  const cleanups: (() => Promise<void>)[] = [];
  const undo = async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  };

  try {
    // Discord: real (token + binding given) or local from the seed.
    let discord: LocalDiscord | null = null;
    let tokenFile: string;
    let bindingFile: string;
    let coordinatorRoutes: string;
    if (options.discord) {
      tokenFile = resolve(options.discord.tokenFile);
      bindingFile = resolve(options.discord.bindingFile);
      const given = options.discord.routesFile ?? target?.routesFile;
      coordinatorRoutes = given ? resolve(given) : join(config, 'routes.yaml');
      if (!given) {
        const binding = parseYaml(await readFile(bindingFile, 'utf8')) as { channels?: { id: string }[] };
        await writeFile(
          coordinatorRoutes,
          stringifyYaml({
            channels: (binding.channels ?? []).map((c) => ({
              channelId: c.id,
              repository: repositoryId,
              owner: userRepo ? `${repositoryId}-maintainers` : 'shop-team',
            })),
          }),
        );
      }
    } else {
      discord = await LocalDiscord.start({
        ...(await loadSeed(options.seedFile ?? SANDBOX_SEED)),
        port: options.discordPort ?? 0,
      });
      const d = discord;
      cleanups.push(() => d.close());
      tokenFile = await secretFile(join(secrets, 'discord-token'), discord.token);
      bindingFile = join(config, 'binding.yaml');
      await writeFile(
        bindingFile,
        stringifyYaml({
          guildId: discord.guildId,
          channels: [
            { id: discord.channelId('bugs'), mode: 'open' },
            { id: discord.channelId('feedback'), mode: 'mention' },
          ],
          reporters: [],
          reporterRoles: [discord.roleId('reporters'), discord.roleId('reviewers')],
          reviewers: (options.reviewers ?? ['rita']).map((name) => (discord as LocalDiscord).userId(name)),
          limits: { inboundMaxChars: 4000, reportsPerDayPerUser: 200, replyChunkSize: 2000 },
        }),
      );
      if (target?.routesFile) {
        coordinatorRoutes = target.routesFile;
      } else {
        coordinatorRoutes = join(config, 'routes.yaml');
        const owner = userRepo ? `${repositoryId}-maintainers` : 'shop-team';
        await writeFile(
          coordinatorRoutes,
          stringifyYaml({
            channels: [
              { channelId: discord.channelId('bugs'), repository: repositoryId, owner },
              { channelId: discord.channelId('feedback'), repository: repositoryId, owner: 'product' },
            ],
          }),
        );
      }
      log(`local Discord: ${discord.sandboxUrl}`);
    }

    // S3: the evidence bucket on a local server.
    const s3 = await startLocalS3({ dir: join(dir, 's3'), port: options.s3Port ?? 0, buckets: [BUCKET] });
    cleanups.push(() => s3.close());
    log(`local S3: ${s3.endpoint}`);

    let remote: ExampleRemote;
    let repositoriesFile: string;
    let workerRoutes: string;
    if (target && userRepo) {
      // The operators' own repositories and agent routes, read in place (relative paths stay theirs).
      remote = ExampleRemote.existing(userRepo.url, userRepo.targetBranch);
      repositoriesFile = target.repositoriesFile;
      workerRoutes = target.agentRoutesFile;
      log(`target repository: ${userRepo.id} (${userRepo.url}, ${userRepo.targetBranch})`);
    } else {
      // The example repository as a remote, and the scripted runtime's change beside it.
      remote = await ExampleRemote.create({
        path: join(dir, 'remote', 'shop-cart.git'),
        source: EXAMPLE,
      });
      const fix = join(dir, 'scripted-fix');
      await cp(EXAMPLE_FIX, fix, {
        recursive: true,
        force: true,
        filter: (src) => src !== join(EXAMPLE_FIX, 'README.md'),
      });
      repositoriesFile = join(config, 'repositories.yaml');
      await writeFile(repositoriesFile, stringifyYaml(repositoriesDocument(remote.path)));
      workerRoutes = join(config, 'worker-routes.yaml');
      await writeFile(
        workerRoutes,
        stringifyYaml({
          normal: {
            name: 'scripted',
            timeoutMs: 60_000,
            runtime: {
              kind: 'scripted',
              steps: [{ copy: fix }, ...(options.laterAttempts ?? []).map((step) => ({ ...step }))],
            },
          },
          escalation: null,
          maxAttempts: 3,
        }),
      );
    }

    // The ledger and the projection schema.
    const ledger = await connectLedger({
      servers: natsUrl.split(','),
      namespace,
      stream,
      name: 'stack',
      replicas: options.ledgerReplicas ?? 1,
    });
    try {
      const provisioned = await ledger.provision();
      for (const w of provisioned.warnings) log(`provision: ${w}`);
      if ((options.ledgerReplicas ?? 1) > 1) {
        // The lease service would create its bucket with one replica; a cluster gets it replicated first.
        await ledger.js.views.kv(leaseBucket, {
          replicas: options.ledgerReplicas,
          history: 5,
          allow_direct: true,
        });
      }
    } finally {
      await ledger.close();
    }
    const ds = createProjectionDataSource({
      url: databaseUrl,
      schema: dbSchema,
      applicationName: 'caseloop-stack',
      poolSize: 1,
    });
    await ds.initialize();
    try {
      await migrateProjections(ds);
    } finally {
      await ds.destroy();
    }
    const databaseUrlFile = await secretFile(join(secrets, 'database-url'), databaseUrl);

    const pickPort = options.pickPort ?? (() => freePort());
    const fixedPort = (name: ServiceName): number | undefined =>
      (name === 'console' ? options.casePagePort : undefined) || options.servicePorts?.[name] || undefined;
    const ports = {} as Record<ServiceName, number>;
    for (const name of SERVICE_NAMES) ports[name] = fixedPort(name) ?? (await pickPort(name));
    const consoleUrl = () => `http://127.0.0.1:${ports.console}`;
    const evidenceUrl = () => `http://127.0.0.1:${ports.evidence}`;
    const platform = {
      NATS_URL: natsUrl,
      CASELOOP_NAMESPACE: namespace,
      LEDGER_STREAM: stream,
      LOG_LEVEL: 'info',
    };
    const s3AccessKeyIdFile = await secretFile(join(secrets, 's3-access-key-id'), s3.accessKeyId);
    const s3SecretAccessKeyFile = await secretFile(join(secrets, 's3-secret-access-key'), s3.secretAccessKey);
    const consoleSecrets = discord
      ? {
          clientSecretFile: await secretFile(
            join(secrets, 'console-client-secret'),
            discord.oauth2.clientSecret,
          ),
          sessionSecretFile: await secretFile(
            join(secrets, 'console-session-secret'),
            randomBytes(32).toString('hex'),
          ),
        }
      : null;
    // Each service's environment, read from the ports as they are now: the evidence service's port is
    // named to the console (EVIDENCE_PUBLIC_URL), the console's own in its sign-in callback. Every
    // other link between services goes over NATS.
    const envFor = (name: ServiceName): Record<string, string> => ({
      ...platform,
      ...envs()[name],
      ...(options.env?.[name] ?? {}),
    });
    const envs = (): Record<ServiceName, Record<string, string>> => ({
      intake: {
        INTAKE_BINDING_FILE: bindingFile,
        INTAKE_DISCORD_TOKEN_FILE: tokenFile,
        ...(discord ? { INTAKE_DISCORD_API_URL: discord.apiUrl, INTAKE_FAST_IDENTIFY: 'true' } : {}),
      },
      coordinator: {
        COORDINATOR_REPOSITORIES_FILE: repositoriesFile,
        COORDINATOR_ROUTES_FILE: coordinatorRoutes,
        COORDINATOR_CLOCK_INTERVAL_MS: '60000',
      },
      worker: {
        WORKER_REPOSITORIES_FILE: repositoriesFile,
        WORKER_ROUTES_FILE: workerRoutes,
        WORKER_DIR: workerDir,
        // Check logs go to the evidence bucket, where the evidence service reads them.
        WORKER_S3_ENDPOINT: s3.endpoint,
        WORKER_S3_REGION: s3.region,
        WORKER_S3_BUCKET: BUCKET,
        WORKER_S3_ACCESS_KEY_ID_FILE: join(secrets, 's3-access-key-id'),
        WORKER_S3_SECRET_ACCESS_KEY_FILE: join(secrets, 's3-secret-access-key'),
      },
      lease: { LEASE_BUCKET: leaseBucket },
      evidence: {
        LEASE_BUCKET: leaseBucket,
        EVIDENCE_REPOSITORIES_FILE: repositoriesFile,
        // Its own directory: the code comes from the remote, the check logs from the bucket.
        EVIDENCE_DIR: join(dir, 'evidence'),
        EVIDENCE_S3_ENDPOINT: s3.endpoint,
        EVIDENCE_S3_REGION: s3.region,
        EVIDENCE_S3_BUCKET: BUCKET,
        EVIDENCE_S3_ACCESS_KEY_ID_FILE: s3AccessKeyIdFile,
        EVIDENCE_S3_SECRET_ACCESS_KEY_FILE: s3SecretAccessKeyFile,
        EVIDENCE_PUBLIC_URL: evidenceUrl(),
        // A missing executable is how "no browser on this machine" looks to the service.
        EVIDENCE_BROWSER_EXECUTABLE: chromium ?? join(dir, 'no-chromium-here'),
        EVIDENCE_LEASE_TTL_MS: '60000',
        EVIDENCE_LEASE_RENEW_WITHIN_MS: '30000',
      },
      monitor: {
        CASELOOP_DATABASE_URL_FILE: databaseUrlFile,
        CASELOOP_DB_SCHEMA: dbSchema,
        MONITOR_HEARTBEAT_MS: '30000',
      },
      console: {
        CASELOOP_DATABASE_URL_FILE: databaseUrlFile,
        CASELOOP_DB_SCHEMA: dbSchema,
        CONSOLE_REFRESH_S: '5',
        EVIDENCE_PUBLIC_URL: evidenceUrl(),
        ...(discord && consoleSecrets
          ? {
              CONSOLE_AUTH: 'discord',
              CONSOLE_PUBLIC_URL: consoleUrl(),
              CONSOLE_DISCORD_CLIENT_ID: discord.applicationId,
              CONSOLE_DISCORD_CLIENT_SECRET_FILE: consoleSecrets.clientSecretFile,
              CONSOLE_DISCORD_API_URL: `${discord.apiUrl}/v10`,
              CONSOLE_DISCORD_AUTHORIZE_URL: `${discord.url}/oauth2/authorize`,
              CONSOLE_BINDING_FILE: bindingFile,
              CONSOLE_SESSION_SECRET_FILE: consoleSecrets.sessionSecretFile,
            }
          : { CONSOLE_AUTH: 'loopback' }),
      },
    });
    const selected = options.services ?? SERVICE_NAMES;
    const services = {} as Record<ServiceName, ServiceProcess>;
    const serviceProcess = (name: ServiceName) =>
      new ServiceProcess(name, ports[name], join(logs, `${name}.log`), envFor(name));
    for (const name of SERVICE_NAMES) services[name] = serviceProcess(name);
    const replicas: ServiceProcess[] = [];
    const stopServices = async () => {
      // The console and intake first (no new readers, no new reports), the monitor last.
      for (const name of [
        'console',
        'intake',
        'coordinator',
        'worker',
        'evidence',
        'lease',
        'monitor',
      ] as const) {
        await Promise.all(replicas.filter((r) => r.name === name).map((r) => r.stop()));
        await services[name].stop();
      }
    };
    cleanups.push(stopServices);
    const readyTimeoutMs = options.readyTimeoutMs ?? 120_000;
    // A free port is found by binding it and letting it go; the service binds it again only once it
    // has booted, and in between another process (another stack on this machine) may take it. Holding
    // the port until the service binds would not close that gap (the holder must let go before the
    // child can bind), so the stack detects the loss instead: readiness counts only from the process
    // that repeats its own instance marker on /healthz, and a service that failed to bind its port,
    // or finds another process answering there, gets a fresh port and starts again, together with
    // every service whose environment named the old one (the console names the evidence service's
    // URL), a bounded number of times. Fixed ports are never moved: losing one fails the start,
    // naming the port. Stack.urls are read only once every service stands on its final port.
    const MAX_PORT_MOVES = 5;
    let moves = 0;
    let pending: readonly ServiceName[] = selected;
    while (pending.length > 0) {
      for (const name of pending) services[name].start();
      const taken: PortTakenError[] = [];
      await Promise.all(
        pending.map((name) =>
          services[name].waitReady(readyTimeoutMs).catch((e: unknown) => {
            if (e instanceof PortTakenError) taken.push(e);
            else throw e;
          }),
        ),
      );
      if (taken.length === 0) break;
      for (const e of taken) {
        if (fixedPort(e.service) !== undefined)
          throw new Error(`${e.message}; the port was fixed by the options and is not moved`);
        if (++moves > MAX_PORT_MOVES)
          throw new Error(`${e.message}; gave up after moving ${MAX_PORT_MOVES} services to other ports`);
        log(`${e.service}: port ${e.port} taken by another process, moving to another`);
        ports[e.service] = await pickPort(e.service);
      }
      const moved = taken.map((e) => e.service);
      const dependents = selected.filter(
        (name) =>
          !moved.includes(name) && JSON.stringify(envFor(name)) !== JSON.stringify(services[name].env),
      );
      for (const name of dependents) await services[name].stop();
      for (const name of [...moved, ...dependents]) services[name] = serviceProcess(name);
      pending = [...moved, ...dependents];
    }
    // Services not started stand ready to start with the final ports and environment too.
    for (const name of SERVICE_NAMES) if (!selected.includes(name)) services[name] = serviceProcess(name);
    // With the local Discord, reviewers sign in to the console through its OAuth2 (consent screen);
    // with real Discord the stack has no OAuth2 application, so the console stays on loopback, open.
    if (discord) discord.oauth2.addRedirectUri(`${consoleUrl()}/auth/callback`);
    log(`services ready: ${selected.map((n) => `${n} ${services[n].url}`).join(', ')}`);

    const urls: StackUrls = {
      chat: discord ? discord.sandboxUrl : null,
      discordApi: discord ? discord.apiUrl : null,
      s3: s3.endpoint,
      casePage: consoleUrl(),
      services: Object.fromEntries(SERVICE_NAMES.map((n) => [n, services[n].url])) as Record<
        ServiceName,
        string
      >,
    };
    let stopped = false;
    return {
      dir,
      namespace,
      stream,
      dbSchema,
      leaseBucket,
      natsUrl,
      databaseUrl,
      discord,
      s3,
      bucket: BUCKET,
      remote,
      repositoryId,
      repositoriesFile,
      urls,
      services,
      cliEnv: {
        CASELOOP_NATS_URL: natsUrl,
        CASELOOP_NAMESPACE: namespace,
        CASELOOP_STREAM: stream,
        CASELOOP_DATABASE_URL: databaseUrl,
        CASELOOP_DB_SCHEMA: dbSchema,
      },
      replicas,
      addReplica: async (service) => {
        const n = replicas.filter((r) => r.name === service).length + 2;
        // An evidence replica gets a directory of its own (mirrors, checkouts, setup runs, package
        // cache), as it would on another host: nothing of it is shared with the first process.
        const own: Record<string, string> = {};
        if (service === 'evidence') {
          own.EVIDENCE_DIR = join(dir, `evidence-${n}`);
          await mkdir(own.EVIDENCE_DIR, { recursive: true });
        }
        // No other service is told a replica's port: one that lost its port just takes another.
        for (let attempt = 1; ; attempt++) {
          const r = new ServiceProcess(service, await pickPort(service), join(logs, `${service}-${n}.log`), {
            ...platform,
            ...envs()[service],
            ...own,
            ...(options.env?.[service] ?? {}),
          });
          replicas.push(r);
          r.start();
          try {
            await r.waitReady(readyTimeoutMs);
            return r;
          } catch (e) {
            replicas.splice(replicas.indexOf(r), 1);
            await r.stop();
            if (!(e instanceof PortTakenError) || attempt >= MAX_PORT_MOVES) throw e;
            log(`${service} replica: port ${e.port} taken by another process, moving to another`);
          }
        }
      },
      kill: (service, signal = 'SIGKILL') => services[service].kill(signal),
      restart: async (service) => {
        // The same port again: the stack's URLs and the other services' environment name it.
        await services[service].stop();
        services[service].start();
        try {
          await services[service].waitReady(readyTimeoutMs);
        } catch (e) {
          if (!(e instanceof PortTakenError)) throw e;
          throw new Error(
            `${service} cannot restart: another process took its port ${e.port} while it was down (${e.message})`,
          );
        }
      },
      stop: async () => {
        if (stopped) return;
        stopped = true;
        await undo();
      },
    };
  } catch (e) {
    await undo();
    throw e;
  }
}

/** Removes what a test stack left on the shared NATS and Postgres: its streams and its schema. */
export async function dropStackState(
  stack: Pick<Stack, 'natsUrl' | 'databaseUrl' | 'stream' | 'dbSchema' | 'leaseBucket'> &
    Partial<Pick<Stack, 'namespace'>>,
): Promise<void> {
  const nc = await connect({ servers: stack.natsUrl.split(',') });
  try {
    const jsm = await nc.jetstreamManager();
    const keys = stack.namespace ? [sourceKeyStream(stack.namespace)] : [];
    for (const s of [stack.stream, `${stack.stream}_DLQ`, `KV_${stack.leaseBucket}`, ...keys])
      await jsm.streams.delete(s).catch(() => undefined);
  } finally {
    await nc.close();
  }
  const pg = new Client({ connectionString: stack.databaseUrl });
  await pg.connect();
  try {
    await pg.query(`drop schema if exists "${stack.dbSchema}" cascade`);
  } finally {
    await pg.end();
  }
}
