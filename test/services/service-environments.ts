import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultSeed, LocalDiscord } from '@caseloop/discord-sandbox';
import { PG_URL } from '@caseloop/testing';
import { Client } from 'pg';

export interface ServiceEnvironments {
  dir: string;
  /** What each service needs beyond the platform keys to boot: files, a local Discord, a Postgres schema. */
  extra: Record<string, Record<string, string>>;
  secretFile(name: string, value: string): Promise<string>;
  cleanup(): Promise<void>;
}

/** Placeholders where nothing is called at boot; real local stand-ins where a service connects at start. */
export async function serviceEnvironments(o: {
  leaseBucket: string;
  monitorSchema: string;
}): Promise<ServiceEnvironments> {
  const dir = await mkdtemp(join(tmpdir(), 'caseloop-boot-'));
  const secretFile = async (name: string, value: string) => {
    const file = join(dir, name);
    await writeFile(file, value);
    await chmod(file, 0o600);
    return file;
  };
  const repositories = join(dir, 'repositories.yaml');
  await writeFile(
    repositories,
    'repositories:\n  - id: shop\n    url: https://git.example.com/shop.git\n    targetBranch: main\n    checks:\n      - { name: focused, kind: focused_test, command: ["true"], timeoutMs: 1000 }\n',
  );
  for (const d of ['evidence', 'work']) await mkdir(join(dir, d));
  const routes = join(dir, 'routes.yaml');
  await writeFile(
    routes,
    'normal:\n  name: scripted\n  timeoutMs: 10000\n  runtime:\n    kind: scripted\n    steps: []\n',
  );
  // Intake connects to Discord at start: a local one, bound to its bugs channel.
  const discord = await LocalDiscord.start(defaultSeed());
  const binding = join(dir, 'binding.json');
  await writeFile(
    binding,
    JSON.stringify({
      guildId: discord.guildId,
      channels: [{ id: discord.channelId('bugs'), mode: 'open' }],
      reporters: [discord.userId('alice')],
      reporterRoles: [],
      reviewers: [discord.userId('rita')],
      limits: { inboundMaxChars: 2000, reportsPerDayPerUser: 50, replyChunkSize: 2000 },
    }),
  );
  const extra: Record<string, Record<string, string>> = {
    intake: {
      INTAKE_BINDING_FILE: binding,
      INTAKE_DISCORD_TOKEN_FILE: await secretFile('discord-token', discord.token),
      INTAKE_DISCORD_API_URL: discord.apiUrl,
      INTAKE_FAST_IDENTIFY: 'true',
    },
    lease: { LEASE_BUCKET: o.leaseBucket },
    worker: {
      WORKER_REPOSITORIES_FILE: repositories,
      WORKER_ROUTES_FILE: routes,
      WORKER_DIR: join(dir, 'work'),
      WORKER_S3_ENDPOINT: 'http://127.0.0.1:9',
      WORKER_S3_BUCKET: 'caseloop-evidence',
      WORKER_S3_ACCESS_KEY_ID_FILE: await secretFile('worker-s3-key-id', 'boot-test-key'),
      WORKER_S3_SECRET_ACCESS_KEY_FILE: await secretFile('worker-s3-secret', 'boot-test-secret'),
    },
    evidence: {
      EVIDENCE_REPOSITORIES_FILE: repositories,
      EVIDENCE_DIR: join(dir, 'evidence'),
      EVIDENCE_S3_ENDPOINT: 'http://127.0.0.1:9',
      EVIDENCE_S3_BUCKET: 'caseloop-evidence',
      EVIDENCE_S3_ACCESS_KEY_ID_FILE: await secretFile('s3-key-id', 'boot-test-key'),
      EVIDENCE_S3_SECRET_ACCESS_KEY_FILE: await secretFile('s3-secret', 'boot-test-secret'),
      EVIDENCE_PUBLIC_URL: 'http://evidence.test',
      LEASE_BUCKET: o.leaseBucket,
    },
    monitor: {
      CASELOOP_DATABASE_URL_FILE: await secretFile('database-url', PG_URL),
      CASELOOP_DB_SCHEMA: o.monitorSchema,
    },
    // Sign-in with the local Discord, as deployed; nothing is called on Discord until someone signs in.
    console: {
      CASELOOP_DATABASE_URL_FILE: await secretFile('console-database-url', PG_URL),
      CASELOOP_DB_SCHEMA: o.monitorSchema,
      CONSOLE_PUBLIC_URL: 'http://127.0.0.1:3007',
      CONSOLE_DISCORD_CLIENT_ID: discord.applicationId,
      CONSOLE_DISCORD_API_URL: `${discord.apiUrl}/v10`,
      CONSOLE_DISCORD_AUTHORIZE_URL: `${discord.url}/oauth2/authorize`,
      CONSOLE_BINDING_FILE: binding,
      CONSOLE_SESSION_SECRET_FILE: await secretFile(
        'console-session-secret',
        'boot-test-session-secret-0123456789abcdef',
      ),
    },
  };
  return {
    dir,
    extra,
    secretFile,
    async cleanup() {
      await discord.close();
      const pg = new Client({ connectionString: PG_URL });
      await pg.connect();
      await pg.query(`drop schema if exists "${o.monitorSchema}" cascade`);
      await pg.end();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
