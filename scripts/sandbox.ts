/**
 * The sandbox (`npm start`): the whole system in the foreground, in `.caseloop/sandbox/`.
 * A local Discord with its chat page, a local S3 server, the example repository as a git remote
 * and the six services as their own processes; Ctrl-C stops everything.
 *
 * With CASELOOP_DISCORD_TOKEN_FILE and CASELOOP_DISCORD_BINDING_FILE set it talks to real Discord
 * (and keeps its ledger across runs); otherwise every start is a fresh local world, because the
 * local Discord keeps its messages in memory only.
 *
 * Your own repositories instead of the example (flags, or the environment variable beside each):
 *   --repositories <file>   CASELOOP_REPOSITORIES_FILE   (written by `caseloop repo init`)
 *   --agent-routes <file>   CASELOOP_AGENT_ROUTES_FILE   (default: agent-routes.yaml beside it)
 *   --routes <file>         CASELOOP_ROUTES_FILE         (channel → repository and owner; default:
 *                                                         every channel to the first repository)
 *   --binding <file>        CASELOOP_DISCORD_BINDING_FILE, with --token-file / CASELOOP_DISCORD_TOKEN_FILE
 *
 * Scaled out (docs/scaling.md):
 *   --cluster               CASELOOP_SANDBOX_CLUSTER=1: its own 3-node JetStream cluster of nats-server
 *                           processes on loopback (client ports 4231-4233, routes 6231-6233, monitoring
 *                           8231-8233, stores and logs in <sandbox>/nats/), the ledger, its dead letters
 *                           and the lease bucket replicated three times, and a second process of
 *                           coordinator, worker, lease, evidence and monitor
 */
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { decodeEvent } from '@caseloop/contracts';
import { connectLedger, Ledger } from '@caseloop/ledger';
import { dropStackState, followStream, ServiceName, Stack, startStack } from '@caseloop/stack';
import { NATS_SERVER_BIN, NatsCluster } from '@caseloop/testing';
import { narrate } from './sandbox.narration';

const ROOT = resolve(__dirname, '..');
const env = process.env;
/** With --cluster: the services that get a second process (intake stays one per bot token). */
const SCALED: ServiceName[] = ['coordinator', 'worker', 'lease', 'evidence', 'monitor'];

/**
 * Narrates the ledger until stopped. Never fails: its consumer may be removed by the server under a
 * loaded machine (stalled past the inactivity threshold), and a new one reads on from where it was.
 */
function follow(ledger: Ledger, stack: Stack, stopped: () => boolean): Promise<void> {
  return followStream(ledger.js, ledger.jsm, {
    stream: ledger.stream,
    startSeq: 1,
    batchSize: 256,
    stopped,
    onMessage: (m) => {
      try {
        const line = narrate(decodeEvent(m.subject, m.data, m.seq), stack);
        if (line) process.stdout.write(`  ${line}\n`);
      } catch {
        // Not a case event this version knows; `caseloop tail` shows everything.
      }
    },
    onReopen: (why, position) =>
      process.stdout.write(`  (ledger reader: ${why}; reading on from sequence ${position})\n`),
  });
}

/** Flags first, then the environment; paths are taken relative to where `npm start` was typed. */
function settings(): {
  repositories?: string;
  agentRoutes?: string;
  routes?: string;
  binding?: string;
  tokenFile?: string;
  cluster?: boolean;
} {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: process.argv.slice(2),
      options: {
        repositories: { type: 'string' },
        'agent-routes': { type: 'string' },
        routes: { type: 'string' },
        binding: { type: 'string' },
        'token-file': { type: 'string' },
        cluster: { type: 'boolean' },
      },
      strict: true,
    }));
  } catch (e) {
    throw new Error(
      `${(e as Error).message.split('\n')[0]} (flags: --repositories, --agent-routes, --routes, --binding, --token-file, --cluster)`,
    );
  }
  // npm runs scripts from the package root; INIT_CWD is where the command was typed.
  const base = env.INIT_CWD ?? process.cwd();
  const path = (flag: string, key: string): string | undefined => {
    const v = (values[flag] as string | undefined) ?? env[key];
    return v ? resolve(base, v) : undefined;
  };
  const repositories = path('repositories', 'CASELOOP_REPOSITORIES_FILE');
  let agentRoutes = path('agent-routes', 'CASELOOP_AGENT_ROUTES_FILE');
  if (repositories && !agentRoutes) {
    const beside = join(dirname(repositories), 'agent-routes.yaml');
    if (!existsSync(beside))
      throw new Error(
        `--repositories needs agent routes: --agent-routes <file>, or ${beside} (caseloop repo init writes a starter)`,
      );
    agentRoutes = beside;
  }
  if (agentRoutes && !repositories)
    throw new Error('--agent-routes goes with --repositories (the example brings its own scripted route)');
  for (const [what, file] of [
    ['repositories', repositories],
    ['agent routes', agentRoutes],
  ] as const)
    if (file && !existsSync(file)) throw new Error(`the ${what} file ${file} does not exist`);
  const out: ReturnType<typeof settings> = {};
  if (repositories) out.repositories = repositories;
  if (agentRoutes) out.agentRoutes = agentRoutes;
  const routes = path('routes', 'CASELOOP_ROUTES_FILE');
  if (routes) out.routes = routes;
  const binding = path('binding', 'CASELOOP_DISCORD_BINDING_FILE');
  if (binding) out.binding = binding;
  const tokenFile = path('token-file', 'CASELOOP_DISCORD_TOKEN_FILE');
  if (tokenFile) out.tokenFile = tokenFile;
  if (values.cluster === true || env.CASELOOP_SANDBOX_CLUSTER === '1') out.cluster = true;
  return out;
}

async function main(): Promise<void> {
  const dir = resolve(env.CASELOOP_SANDBOX_DIR ?? join(ROOT, '.caseloop', 'sandbox'));
  const given = settings();
  const tokenFile = given.tokenFile;
  const bindingFile = given.binding;
  if (Boolean(tokenFile) !== Boolean(bindingFile)) {
    throw new Error(
      'set both the token file and the binding (--token-file/--binding or CASELOOP_DISCORD_TOKEN_FILE/CASELOOP_DISCORD_BINDING_FILE) for real Discord, or neither for the local one',
    );
  }
  const real = Boolean(tokenFile && bindingFile);
  // `any`: every port picked free (a second sandbox beside the first, or a test of this command).
  const anyPort = env.CASELOOP_SANDBOX_PORTS === 'any';
  const port = (key: string, dflt: number) => (anyPort ? 0 : Number(env[key] ?? dflt));
  const local = env.CASELOOP_SANDBOX_NAMESPACE ?? 'sandbox';
  if (!/^[a-z][a-z0-9_]{0,30}$/.test(local))
    throw new Error('CASELOOP_SANDBOX_NAMESPACE: lower-case letters, digits and _ only');
  if (given.cluster && env.CASELOOP_NATS_URL)
    throw new Error('--cluster starts its own nats-servers: leave CASELOOP_NATS_URL unset');
  const state = {
    natsUrl: env.CASELOOP_NATS_URL ?? 'nats://127.0.0.1:4222',
    databaseUrl: env.CASELOOP_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    namespace: real ? 'caseloop' : local,
    stream: real ? 'CASE_LEDGER' : `${local.toUpperCase()}_LEDGER`,
    dbSchema: real ? 'caseloop' : `caseloop_${local}`,
    leaseBucket: real ? 'caseloop-leases' : `${local}-leases`,
  };
  if (!real) {
    process.stdout.write('starting a fresh sandbox (the local Discord keeps nothing between runs)\n');
    // A fresh cluster has nothing of the last run; the shared server and Postgres might.
    if (!given.cluster) await dropStackState(state);
    await rm(dir, { recursive: true, force: true });
  }
  let cluster: NatsCluster | null = null;
  if (given.cluster) {
    if (!existsSync(NATS_SERVER_BIN))
      throw new Error(`--cluster needs nats-server at ${NATS_SERVER_BIN} (or CASELOOP_NATS_SERVER=<path>)`);
    process.stdout.write(`starting 3 nats-server nodes (stores and logs in ${join(dir, 'nats')})\n`);
    cluster = await NatsCluster.start({
      dir: join(dir, 'nats'),
      logs: true,
      ...(anyPort ? {} : { ports: { client: 4231, cluster: 6231, monitor: 8231 } }),
    });
    state.natsUrl = cluster.urls.join(',');
    if (!real) await dropStackState(state);
  }
  try {
    await run(dir, state, given, real, anyPort, port, cluster);
  } finally {
    await cluster?.stop(false);
  }
}

async function run(
  dir: string,
  state: {
    natsUrl: string;
    databaseUrl: string;
    namespace: string;
    stream: string;
    dbSchema: string;
    leaseBucket: string;
  },
  given: ReturnType<typeof settings>,
  real: boolean,
  anyPort: boolean,
  port: (key: string, dflt: number) => number,
  cluster: NatsCluster | null,
): Promise<void> {
  const tokenFile = given.tokenFile;
  const bindingFile = given.binding;
  const stack = await startStack({
    dir,
    ...state,
    ...(cluster ? { ledgerReplicas: cluster.nodes.length } : {}),
    chromium: env.CASELOOP_CHROMIUM === 'none' ? null : (env.CASELOOP_CHROMIUM ?? '/usr/bin/chromium'),
    ...(real
      ? {
          discord: {
            tokenFile: tokenFile as string,
            bindingFile: bindingFile as string,
            ...(given.routes ? { routesFile: given.routes } : {}),
          },
        }
      : {}),
    ...(given.repositories && given.agentRoutes
      ? {
          target: {
            repositoriesFile: given.repositories,
            agentRoutesFile: given.agentRoutes,
            ...(given.routes ? { routesFile: given.routes } : {}),
          },
        }
      : {}),
    discordPort: port('CASELOOP_SANDBOX_DISCORD_PORT', 3900),
    s3Port: port('CASELOOP_SANDBOX_S3_PORT', 4568),
    servicePorts: anyPort
      ? {}
      : { intake: 3001, coordinator: 3002, worker: 3003, lease: 3004, evidence: 3005, monitor: 3006 },
    casePagePort: port('CASELOOP_SANDBOX_CASE_PAGE_PORT', 3007),
    log: (line) => process.stdout.write(`${line}\n`),
  });
  if (cluster) {
    try {
      for (const name of SCALED) await stack.addReplica(name);
    } catch (e) {
      await stack.stop();
      throw e;
    }
  }

  const ledger = await connectLedger({
    servers: stack.natsUrl.split(','),
    namespace: stack.namespace,
    stream: stack.stream,
    name: 'sandbox',
  });
  let stopping = false;
  const following = follow(ledger, stack, () => stopping).catch((e: unknown) => {
    process.stderr.write(`sandbox: the ledger narration stopped: ${(e as Error).message}\n`);
  });
  const cli = Object.entries(stack.cliEnv)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
  process.stdout.write(
    [
      '',
      'caseloop is running.',
      stack.urls.chat
        ? `  chat page:   ${stack.urls.chat}   (post in #bugs as alice or bob; approve in the thread as rita)`
        : '  Discord:     the bound channels of your server',
      stack.urls.chat
        ? `  case page:   ${stack.urls.casePage}/cases   (sign in with the local Discord as rita; every case, its timeline, gate claims and evidence)`
        : `  case page:   ${stack.urls.casePage}/cases   (every case, its timeline, gate claims and evidence)`,
      `  evidence:    ${stack.urls.services.evidence}/evidence/cases/<caseId>/...  (links in each receipt)`,
      `  services:    ${Object.entries(stack.urls.services)
        .map(([n, u]) => `${n} ${u}/healthz`)
        .join(', ')}`,
      ...(cluster
        ? [
            `  NATS:        3 nodes, ${cluster.urls.join(',')} (monitoring ${cluster.nodes.map((n) => `http://127.0.0.1:${n.monitorPort}`).join(', ')}); ledger and lease bucket R3`,
            `  replicas:    ${stack.replicas.map((r) => `${r.name} ${r.url}/healthz`).join(', ')}`,
          ]
        : []),
      `  logs:        ${join(stack.dir, 'logs')}${cluster ? ` (nats-server: ${join(dir, 'nats')}/n*.log)` : ''}`,
      `  repository:  ${stack.repositoryId} at ${stack.remote.path} (the branch caseloop/<caseId> appears there; ${stack.remote.branch} is never touched)`,
      `  inspect:     ${cli} npx caseloop replay <caseId>   (also: audit, tail, stats)`,
      'Ctrl-C stops everything.',
      '',
    ].join('\n'),
  );

  await new Promise<void>((resolveStop) => {
    process.once('SIGINT', resolveStop);
    process.once('SIGTERM', resolveStop);
  });
  stopping = true;
  process.stdout.write('\nstopping…\n');
  await following;
  await ledger.close();
  await stack.stop();
  process.stdout.write('stopped.\n');
}

main().catch((e: unknown) => {
  process.stderr.write(`sandbox: ${(e as Error).message}\n`);
  process.exit(1);
});
