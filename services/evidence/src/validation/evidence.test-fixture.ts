import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { checkOutputArtifactPath, draft, EventDraft, Producer, RecordedEvent } from '@caseloop/contracts';
import { connectLedger, Ledger } from '@caseloop/ledger';
import { LocalS3, NATS_URL, startLocalS3, uniqueSuffix } from '@caseloop/testing';
import { connect } from 'nats';
import { S3ArtifactStore } from '../storage/s3-artifact.store';

/**
 * Everything the evidence service touches, real and on loopback: a provisioned ledger in its own
 * namespace, an S3 server over a temp directory, a worktrees root with git repositories, and the
 * worker's artifacts directory. `cleanup()` removes all of it.
 */
export interface EvidenceHarness {
  namespace: string;
  ledger: Ledger;
  s3: LocalS3;
  artifacts: S3ArtifactStore;
  root: string;
  worktreesDir: string;
  artifactsDir: string;
  append(
    caseId: string,
    producer: Producer,
    commandId: string,
    events: EventDraft[],
  ): Promise<RecordedEvent[]>;
  events(caseId: string): Promise<RecordedEvent[]>;
  cleanup(): Promise<void>;
}

/** `shared`: a ledger someone else provisioned and cleans up (the lease service's, in browser tests). */
export async function evidenceHarness(shared?: Ledger): Promise<EvidenceHarness> {
  const namespace = shared?.namespace ?? uniqueSuffix();
  const stream = shared?.stream ?? `T${namespace.toUpperCase()}`;
  const root = await mkdtemp(join(tmpdir(), 'evidence-'));
  const worktreesDir = join(root, 'worktrees');
  const artifactsDir = join(root, 'artifacts');
  await mkdir(worktreesDir);
  await mkdir(artifactsDir);
  const ledger = shared ?? (await connectLedger({ servers: NATS_URL, namespace, stream, name: 'evidence' }));
  if (!shared) await ledger.provision();
  const s3 = await startLocalS3({ dir: join(root, 's3') });
  const artifacts = new S3ArtifactStore({
    endpoint: s3.endpoint,
    region: s3.region,
    bucket: `evidence-${namespace}`.slice(0, 63),
    forcePathStyle: true,
    accessKeyId: s3.accessKeyId,
    secretAccessKey: s3.secretAccessKey,
    presignTtlSeconds: 60,
  });
  await artifacts.ensureBucket();
  return {
    namespace,
    ledger,
    s3,
    artifacts,
    root,
    worktreesDir,
    artifactsDir,
    async append(caseId, producer, commandId, events) {
      const res = await ledger.store.handle({
        aggregate: 'case',
        aggregateId: caseId,
        producer,
        commandId,
        causationId: null,
        correlationId: `corr-${caseId}`,
        occurredAt: new Date().toISOString(),
        consistency: 'producer',
        decide: () => events,
      });
      return res.appended;
    },
    async events(caseId) {
      return (await ledger.store.load('case', caseId)).events;
    },
    async cleanup() {
      artifacts.close();
      await s3.close();
      await rm(root, { recursive: true, force: true });
      if (shared) return;
      await ledger.close();
      const nc = await connect({ servers: NATS_URL });
      const jsm = await nc.jetstreamManager();
      for (const s of [stream, `${stream}_DLQ`]) await jsm.streams.delete(s).catch(() => undefined);
      await nc.close();
    },
  };
}

const GIT_ENV = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  GIT_AUTHOR_NAME: 'fixture',
  GIT_AUTHOR_EMAIL: 'fixture@localhost',
  GIT_COMMITTER_NAME: 'fixture',
  GIT_COMMITTER_EMAIL: 'fixture@localhost',
  GIT_CONFIG_NOSYSTEM: '1',
  HOME: tmpdir(),
};
const git = (cwd: string, args: string[]): string =>
  execFileSync('git', args, { cwd, env: GIT_ENV, encoding: 'utf8' }).trim();

/**
 * A case worktree as the worker leaves it: the target branch's head (`base`) and the case's change
 * committed on top (`revision`). `files` are copied in before the base commit, `change` after it.
 */
export async function caseWorktree(
  worktreesDir: string,
  caseId: string,
  files: Record<string, string>,
  change: Record<string, string>,
): Promise<{ path: string; base: string; revision: string }> {
  const path = join(worktreesDir, caseId);
  await mkdir(path, { recursive: true });
  git(path, ['init', '-q', '-b', 'main']);
  for (const [name, text] of Object.entries(files)) {
    await mkdir(dirname(join(path, name)), { recursive: true });
    await writeFile(join(path, name), text);
  }
  git(path, ['add', '-A']);
  git(path, ['commit', '-q', '--allow-empty', '-m', 'base']);
  const base = git(path, ['rev-parse', 'HEAD']);
  for (const [name, text] of Object.entries(change)) {
    await mkdir(dirname(join(path, name)), { recursive: true });
    await writeFile(join(path, name), text);
  }
  git(path, ['add', '-A']);
  git(path, ['commit', '-q', '-m', 'the change']);
  return { path, base, revision: git(path, ['rev-parse', 'HEAD']) };
}

/** A check output where the worker leaves it; returns its digest. */
export async function checkOutput(
  artifactsDir: string,
  caseId: string,
  revision: string,
  text: string,
): Promise<string> {
  const sha = createHash('sha256').update(text).digest('hex');
  const file = join(artifactsDir, checkOutputArtifactPath(caseId, revision, sha));
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, text);
  return sha;
}

export const taskAssigned = (taskId: string, repository: string): EventDraft =>
  draft('TaskAssigned', {
    taskId,
    repository,
    targetBranch: 'main',
    targetRevision: null,
    brief: 'Fix the total.',
  });

export const checksCompleted = (
  taskId: string,
  revision: string,
  targetHead: string,
  outputs: { name: string; sha256: string | null }[],
): EventDraft =>
  draft('ChecksCompleted', {
    taskId,
    revision,
    targetHead,
    passed: true,
    results: outputs.map((o) => ({
      name: o.name,
      kind: 'focused_test' as const,
      outcome: 'passed' as const,
      revision,
      durationMs: 12,
      exitCode: 0,
      outputSha256: o.sha256,
      outputBytes: 10,
    })),
  });
