import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { draft, EventData, EventDraft, RecordedEvent } from '@caseloop/contracts';
import { connectLedger, Ledger } from '@caseloop/ledger';
import { TargetRepository } from '@caseloop/target-repositories';
import { NATS_URL, startLocalS3, uniqueSuffix } from '@caseloop/testing';
import { connect } from 'nats';
import { ChecksRunner } from '../checks/checks.runner';
import { createRedactor } from '../checks/output.redactor';
import { S3CheckLogStore } from '../checks/s3-check-log.store';
import { BranchPublisher } from '../pr-ready/branch.publisher';
import { ProcessGroups } from '../processes/process-groups';
import { DraftPullRequests } from '../pr-ready/draft-pull-requests';
import { RepositoryRegistry } from '../repositories/repository.registry';
import { AgentRuntime } from '../runtimes/agent-runtime';
import { RouteSpec, routesFile } from '../runtimes/route.config';
import { RuntimeLauncher } from '../runtimes/runtime.launcher';
import { createRuntime } from '../runtimes/runtime.factory';
import { Git, installAskpass } from '../worktrees/git.adapter';
import { WorktreeManager } from '../worktrees/worktree.manager';
import { TaskProcessor } from './task.processor';

/** Test support: a real ledger in its own namespace and stream, real git, a worker directory per test file. */
export interface WorkerHarness {
  ledger: Ledger;
  root: string;
  workDir: string;
  /** The check-log bucket on a loopback S3 server. */
  logs: S3CheckLogStore;
  /** A stored check log (by `checkOutputArtifactPath`). */
  readLog(key: string): Promise<Buffer>;
  processor(opts: {
    repositories: TargetRepository[];
    routes: unknown;
    runtimeFor?: (route: RouteSpec) => AgentRuntime;
    draftPullRequests?: DraftPullRequests;
    groups?: ProcessGroups;
  }): Promise<TaskProcessor>;
  coordinator(caseId: string, events: EventDraft[]): Promise<void>;
  events(caseId: string): Promise<RecordedEvent[]>;
  cleanup(): Promise<void>;
}

const silent = { info: () => undefined, warn: () => undefined };

export async function workerHarness(): Promise<WorkerHarness> {
  const namespace = uniqueSuffix('w');
  const stream = `T${namespace.toUpperCase()}`;
  const ledger = await connectLedger({ servers: NATS_URL, namespace, stream, name: 'worker' });
  await ledger.provision();
  const root = await mkdtemp(join(tmpdir(), 'caseloop-worker-'));
  const workDir = join(root, 'work');
  const s3 = await startLocalS3({ dir: join(root, 's3') });
  const logs = new S3CheckLogStore({
    endpoint: s3.endpoint,
    region: s3.region,
    bucket: 'check-logs',
    forcePathStyle: true,
    accessKeyId: s3.accessKeyId,
    secretAccessKey: s3.secretAccessKey,
  });
  await logs.ensureBucket();
  let commands = 0;
  return {
    ledger,
    root,
    workDir,
    logs,
    readLog: (key) => logs.read(key),
    async processor({ repositories, routes, runtimeFor, draftPullRequests, groups }) {
      const registry = new RepositoryRegistry({ repositories });
      const git = new Git({
        askpassPath: await installAskpass(join(workDir, 'askpass')),
        inheritedEnv: process.env,
      });
      const worktrees = new WorktreeManager(git, {
        mirrors: join(workDir, 'mirrors'),
        worktrees: join(workDir, 'worktrees'),
      });
      const redact = createRedactor(registry.knownSecrets());
      return new TaskProcessor({
        store: ledger.store,
        repositories: registry,
        worktrees,
        launcher: new RuntimeLauncher({
          runsDir: join(workDir, 'runs'),
          inheritedEnv: process.env,
          runtimeFor: runtimeFor ?? ((r) => createRuntime(r.runtime)),
          ...(groups ? { groups } : {}),
        }),
        checks: new ChecksRunner({
          logs,
          runsDir: join(workDir, 'runs'),
          inheritedEnv: process.env,
          redact,
          killGraceMs: 500,
        }),
        publisher: new BranchPublisher(git, worktrees),
        draftPullRequests: draftPullRequests ?? null,
        routes: routesFile.parse(routes),
        redact,
        now: () => new Date(),
        logger: silent,
      });
    },
    async coordinator(caseId, events) {
      const n = ++commands;
      const loaded = await ledger.store.load('case', caseId);
      await ledger.store.append({
        aggregate: 'case',
        aggregateId: caseId,
        producer: 'coordinator',
        events,
        commandId: `coord-${caseId}-${n}`,
        causationId: null,
        correlationId: `corr-${caseId}`,
        occurredAt: new Date().toISOString(),
        expectedSeq: loaded.lastSeqByProducer.coordinator ?? 0,
      });
    },
    async events(caseId) {
      return (await ledger.store.load('case', caseId)).events;
    },
    async cleanup() {
      logs.close();
      await s3.close();
      await ledger.close();
      const nc = await connect({ servers: NATS_URL });
      const jsm = await nc.jetstreamManager();
      for (const s of [stream, `${stream}_DLQ`]) await jsm.streams.delete(s).catch(() => undefined);
      await nc.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}

export const caseOpened = (title: string): EventDraft =>
  draft('CaseOpened', {
    sourceId: 'discord-1',
    place: { guildId: '1', channelId: '2', threadId: '3', messageId: '4' },
    reporterId: '5',
    title,
    confidence: 1,
    reasons: [],
  });

export const taskAssigned = (
  data: Partial<EventData<'TaskAssigned'>> & { taskId: string; repository: string },
): EventDraft =>
  draft('TaskAssigned', {
    targetBranch: 'main',
    targetRevision: null,
    brief: 'The cart total is off by one.',
    ...data,
  });

export const ofType = <T extends RecordedEvent['type']>(events: RecordedEvent[], type: T) =>
  events.filter((e): e is Extract<RecordedEvent, { type: T }> => e.type === type);

/** A directory of files a scripted runtime copies over the worktree. */
export async function stepDir(root: string, name: string, files: Record<string, string>): Promise<string> {
  const dir = join(root, 'steps', name);
  await mkdir(dir, { recursive: true });
  for (const [file, content] of Object.entries(files)) await writeFile(join(dir, file), content);
  return dir;
}
