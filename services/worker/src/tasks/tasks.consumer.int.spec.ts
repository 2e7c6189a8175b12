import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { draft, RecordedEvent } from '@caseloop/contracts';
import {
  bootstrapService,
  defineConfig,
  platformConfigShape,
  platformSecrets,
  RunningService,
} from '@caseloop/platform';
import { eventually, LocalS3, NATS_URL, startLocalS3, uniqueSuffix } from '@caseloop/testing';
import { connect } from 'nats';
import { z } from 'zod';
import { TestRemote } from '../worktrees/test-repository.fixture';
import { caseOpened, taskAssigned } from './task-processor.fixture';
import { WorkerTasksModule } from './tasks.module';
import { workerTasksConfigShape, workerTasksSecrets } from './worker-tasks.config';

jest.setTimeout(120_000);

const config = defineConfig({
  schema: z.object({ ...platformConfigShape, ...workerTasksConfigShape }),
  secrets: [...platformSecrets, ...workerTasksSecrets],
});

describe('the worker service consumes task events from the ledger', () => {
  const namespace = uniqueSuffix('w');
  const stream = `T${namespace.toUpperCase()}`;
  let root: string;
  let remote: TestRemote;
  let svc: RunningService<z.infer<typeof config.schema>>;
  let env: Record<string, string>;
  let s3: LocalS3;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'caseloop-worker-svc-'));
    remote = new TestRemote(join(root, 'remote'));
    remote.commit({ 'app.txt': 'broken\n' }, 'initial');
    const fix = join(root, 'fix');
    await mkdir(fix);
    await writeFile(join(fix, 'app.txt'), 'fixed\n');
    await writeFile(
      join(root, 'repositories.yaml'),
      [
        'repositories:',
        '  - id: shop',
        `    url: ${remote.origin}`,
        '    targetBranch: main',
        '    checks:',
        '      - { name: cart, kind: focused_test, command: [sh, -c, "grep -q fixed app.txt"], timeoutMs: 10000 }',
      ].join('\n'),
    );
    await writeFile(
      join(root, 'routes.yaml'),
      [
        'normal:',
        '  name: scripted',
        '  timeoutMs: 10000',
        '  runtime:',
        '    kind: scripted',
        '    steps:',
        `      - copy: ${fix}`,
      ].join('\n'),
    );
    s3 = await startLocalS3({ dir: join(root, 's3') });
    env = {
      CASELOOP_NAMESPACE: namespace,
      LEDGER_STREAM: stream,
      NATS_URL,
      LEDGER_PROVISION: 'true',
      HTTP_PORT: '0',
      HTTP_HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      WORKER_REPOSITORIES_FILE: join(root, 'repositories.yaml'),
      WORKER_ROUTES_FILE: join(root, 'routes.yaml'),
      WORKER_DIR: join(root, 'work'),
      WORKER_S3_ENDPOINT: s3.endpoint,
      WORKER_S3_BUCKET: 'check-logs',
      WORKER_S3_ACCESS_KEY_ID: s3.accessKeyId,
      WORKER_S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
      WORKER_S3_CREATE_BUCKET: 'true',
    };
    svc = await bootstrapService({
      name: 'worker',
      config,
      module: (c) => WorkerTasksModule.forRoot(c),
      env,
      transport: { nakBaseMs: 50, nakMaxMs: 200 },
    });
  });

  afterAll(async () => {
    await svc?.close();
    const nc = await connect({ servers: NATS_URL });
    const jsm = await nc.jetstreamManager();
    for (const s of [stream, `${stream}_DLQ`]) await jsm.streams.delete(s).catch(() => undefined);
    await nc.close();
    await s3?.close();
    await rm(root, { recursive: true, force: true });
  });

  const coordinator = async (
    caseId: string,
    commandId: string,
    events: Parameters<typeof svc.ledger.store.append>[0]['events'],
  ) => {
    await svc.ledger.store.append({
      aggregate: 'case',
      aggregateId: caseId,
      producer: 'coordinator',
      events,
      commandId,
      causationId: null,
      correlationId: `corr-${caseId}`,
      occurredAt: new Date().toISOString(),
    });
  };
  /** The worker's steps (each check's CheckStarted/CheckFinished progress is asserted on its own). */
  const workerTypes = async (caseId: string) =>
    (await svc.ledger.store.load('case', caseId)).events
      .filter((e: RecordedEvent) => e.producer === 'worker')
      .map((e) => e.type)
      .filter((t) => t !== 'CheckStarted' && t !== 'CheckFinished');

  it('turns a TaskAssigned into a pushed branch, and a terminal case into a removed worktree', async () => {
    const caseId = `Csvc${Date.now().toString(36)}`;
    const taskId = `Tsvc${Date.now().toString(36)}`;
    await coordinator(caseId, `assign-${caseId}`, [
      caseOpened('Cart total'),
      taskAssigned({ taskId, repository: 'shop' }),
    ]);
    await eventually(async () => (await workerTypes(caseId)).includes('BranchPushed'), {
      timeoutMs: 60_000,
      what: 'BranchPushed',
    });
    expect(await workerTypes(caseId)).toEqual([
      'WorktreePrepared',
      'AttemptStarted',
      'AttemptFinished',
      'ChecksCompleted',
      'BranchPushed',
    ]);
    expect(remote.ref(`refs/heads/caseloop/${caseId}`)).toMatch(/^[0-9a-f]{40}$/);
    const metrics = await (await fetch(`${svc.url}/metrics`)).text();
    expect(metrics).toMatch(/caseloop_worker_attempts_total\{[^}]*route="normal",outcome="changed"[^}]*\} 1/);
    expect(metrics).toMatch(/caseloop_worker_pushes_total\{[^}]*created="true"[^}]*\} 1/);

    await coordinator(caseId, `cancel-${caseId}`, [
      draft('TaskCancelled', { taskId, reason: 'duplicate of another case' }),
    ]);
    await eventually(async () => (await workerTypes(caseId)).includes('WorktreeRemoved'), {
      timeoutMs: 30_000,
      what: 'WorktreeRemoved',
    });
    expect(existsSync(join(env.WORKER_DIR!, 'worktrees', caseId))).toBe(false);
  });

  it('refuses to start with an invalid repositories file, naming the key', async () => {
    await writeFile(
      join(root, 'bad.yaml'),
      'repositories:\n  - id: "../x"\n    url: https://x/y.git\n    targetBranch: main\n    checks: []\n',
    );
    await expect(
      bootstrapService({
        name: 'worker',
        config,
        module: (c) => WorkerTasksModule.forRoot(c),
        env: { ...env, WORKER_REPOSITORIES_FILE: join(root, 'bad.yaml') },
      }),
    ).rejects.toThrow(
      /repositories\[0\]\.id.*repositories\[0\]\.checks|repositories\[0\]\.checks.*repositories\[0\]\.id/,
    );
  });
});
