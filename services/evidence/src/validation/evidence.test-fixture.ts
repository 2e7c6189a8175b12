import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { checkOutputArtifactPath, draft, EventDraft, Producer, RecordedEvent } from '@caseloop/contracts';
import { connectLedger, Ledger } from '@caseloop/ledger';
import { LocalS3, NATS_URL, startLocalS3, uniqueSuffix } from '@caseloop/testing';
import { connect } from 'nats';
import { AppSetup, RepositorySetupSteps } from '../code/app-setup';
import { CaseCodeSource, GitCaseCode } from '../code/case-code.source';
import { S3ArtifactStore } from '../storage/s3-artifact.store';

/**
 * Everything the evidence service touches, real and on loopback: a provisioned ledger in its own
 * namespace, an S3 server over a temp directory (the evidence bucket, which also holds the worker's
 * check logs), a bare git remote the cases' branches are pushed to, working copies where those
 * branches are made, and the service's own directory. `cleanup()` removes all of it.
 */
export interface EvidenceHarness {
  namespace: string;
  ledger: Ledger;
  s3: LocalS3;
  artifacts: S3ArtifactStore;
  root: string;
  /** Where `caseWorktree` makes each case's commits before pushing them to `remote`. */
  worktreesDir: string;
  /** The repositories' remote (a bare repository): point a repository's `url` here. */
  remote: string;
  /** The evidence service's own directory. */
  evidenceDir: string;
  /** The handler's code, setup and check-log dependencies, as the service composes them. */
  deps: {
    code: CaseCodeSource & { checkoutPath(caseId: string, revision: string): string };
    setup: AppSetup;
    checkLogs: { read(key: string): Promise<Buffer | null> };
  };
  /** Stores a check log where the worker would (for tests of a tampered or missing one). */
  putCheckLog(key: string, body: string): Promise<void>;
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
  const evidenceDir = join(root, 'evidence');
  await mkdir(worktreesDir);
  const remote = remoteBeside(worktreesDir);
  git(root, ['init', '-q', '--bare', remote]);
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
  const worker = new S3Client({
    endpoint: s3.endpoint,
    region: s3.region,
    forcePathStyle: true,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
  });
  return {
    namespace,
    ledger,
    s3,
    artifacts,
    root,
    worktreesDir,
    remote,
    evidenceDir,
    deps: {
      code: new GitCaseCode({ dir: evidenceDir, timeoutMs: 60_000 }),
      setup: new RepositorySetupSteps(),
      checkLogs: { read: (key) => artifacts.readIfPresent(key) },
    },
    async putCheckLog(key, body) {
      // What the worker's check-log store does: a plain PUT into the bucket.
      await worker.send(new PutObjectCommand({ Bucket: artifacts.bucket, Key: key, Body: body }));
    },
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
      worker.destroy();
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

/** The harness's bare remote, beside its working copies. */
const remoteBeside = (worktreesDir: string): string => join(dirname(worktreesDir), 'remote.git');

/**
 * A case branch as the worker pushes it: the target branch's head (`base`) and the case's change
 * committed on top (`revision`), pushed to `caseloop/<caseId>` on the harness's remote. `files` are
 * copied in before the base commit, `change` after it.
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
  git(path, ['push', '-q', '--force', remoteBeside(worktreesDir), `HEAD:refs/heads/caseloop/${caseId}`]);
  return { path, base, revision: git(path, ['rev-parse', 'HEAD']) };
}

/** A check's whole log where the worker stores it (the check-log bucket); returns its digest. */
export async function checkOutput(
  h: Pick<EvidenceHarness, 'putCheckLog'>,
  caseId: string,
  revision: string,
  text: string,
): Promise<string> {
  const sha = createHash('sha256').update(text).digest('hex');
  await h.putCheckLog(checkOutputArtifactPath(caseId, revision, sha), text);
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
