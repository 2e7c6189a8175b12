import { basename, join } from 'node:path';
import { EventStore } from '@caseloop/ledger';
import { PINO_LOGGER } from '@caseloop/platform';
import { loadRepositoriesFile } from '@caseloop/target-repositories';
import {
  DynamicModule,
  Inject,
  Injectable,
  Module,
  OnApplicationBootstrap,
  OnModuleDestroy,
} from '@nestjs/common';
import { Logger } from 'pino';
import { Registry } from 'prom-client';
import { ChecksRunner } from '../checks/checks.runner';
import { createRedactor } from '../checks/output.redactor';
import { S3CheckLogStore } from '../checks/s3-check-log.store';
import { BranchPublisher } from '../pr-ready/branch.publisher';
import { DraftPullRequests } from '../pr-ready/draft-pull-requests';
import { GitHubDraftPullRequests } from '../pr-ready/github-draft-pull-requests';
import { ProcessGroups } from '../processes/process-groups';
import { RepositoryRegistry } from '../repositories/repository.registry';
import { RoutesFile } from '../runtimes/route.config';
import { loadRoutesFile } from '../runtimes/routes.loader';
import { RuntimeLauncher } from '../runtimes/runtime.launcher';
import { Git, installAskpass } from '../worktrees/git.adapter';
import { WorktreeManager } from '../worktrees/worktree.manager';
import { TargetHeadWatch } from './target-head.watch';
import { TaskProcessor } from './task.processor';
import { TasksConsumer } from './tasks.consumer';
import { WorkerMetrics } from './worker.metrics';
import { WorkerTasksConfig } from './worker-tasks.config';

export const ROUTES = Symbol('ROUTES');
export const DRAFT_PULL_REQUESTS = Symbol('DRAFT_PULL_REQUESTS');
export const REDACT = Symbol('REDACT');

/**
 * The target head watch starts once the application is up. On shutdown the processor stops
 * recording outcomes first, then every agent and check still running is killed: an attempt cut
 * short by the stop stays started in the ledger and runs again, in the same worktree, when the
 * worker is back (instead of counting as a failed attempt).
 */
@Injectable()
class TasksLifecycle implements OnApplicationBootstrap, OnModuleDestroy {
  constructor(
    @Inject(TaskProcessor) private readonly processor: TaskProcessor,
    @Inject(ProcessGroups) private readonly groups: ProcessGroups,
    @Inject(TargetHeadWatch) private readonly watch: TargetHeadWatch,
  ) {}
  onApplicationBootstrap(): void {
    this.watch.start();
  }
  async onModuleDestroy(): Promise<void> {
    this.processor.stop();
    this.groups.killAll();
    await this.watch.stop();
  }
}

/**
 * The worker's task feature: repositories and routes validated at start (errors name keys), git,
 * worktrees, runtimes, checks, branch publishing, and the consumer that drives cases.
 */
@Module({})
export class WorkerTasksModule {
  static forRoot(config: WorkerTasksConfig): DynamicModule {
    const dir = (name: string) => join(config.WORKER_DIR, name);
    // Parsed here, before Nest connects to anything: a bad file stops the start naming its keys.
    const repositories = new RepositoryRegistry(loadRepositoriesFile(config.WORKER_REPOSITORIES_FILE));
    const routes = loadRoutesFile(config.WORKER_ROUTES_FILE);
    return {
      module: WorkerTasksModule,
      controllers: [TasksConsumer],
      providers: [
        { provide: RepositoryRegistry, useValue: repositories },
        { provide: ROUTES, useValue: routes },
        { provide: ProcessGroups, useFactory: () => new ProcessGroups() },
        TasksLifecycle,
        {
          provide: REDACT,
          inject: [RepositoryRegistry],
          useFactory: (repos: RepositoryRegistry) => createRedactor(repos.knownSecrets()),
        },
        {
          provide: Git,
          inject: [PINO_LOGGER],
          useFactory: async (logger: Logger) =>
            new Git({
              askpassPath: await installAskpass(dir('askpass')),
              inheritedEnv: process.env,
              defaultTimeoutMs: config.WORKER_GIT_TIMEOUT_MS,
              staleLocks: {
                roots: [dir('mirrors'), dir('worktrees')],
                staleMs: config.WORKER_GIT_STALE_LOCK_MS,
                onRemoved: (lock, ageMs) =>
                  logger.warn(
                    { component: 'git', lock: basename(lock), ageMs: Math.round(ageMs) },
                    'removed a lock file a git that died left behind',
                  ),
              },
            }),
        },
        {
          provide: WorktreeManager,
          inject: [Git],
          useFactory: (git: Git) =>
            new WorktreeManager(git, { mirrors: dir('mirrors'), worktrees: dir('worktrees') }),
        },
        {
          provide: RuntimeLauncher,
          inject: [ProcessGroups],
          useFactory: (groups: ProcessGroups) =>
            new RuntimeLauncher({ runsDir: dir('runs'), inheritedEnv: process.env, groups }),
        },
        {
          provide: S3CheckLogStore,
          useFactory: async () => {
            const store = new S3CheckLogStore({
              endpoint: config.WORKER_S3_ENDPOINT ?? null,
              region: config.WORKER_S3_REGION,
              bucket: config.WORKER_S3_BUCKET,
              forcePathStyle: config.WORKER_S3_FORCE_PATH_STYLE,
              accessKeyId: config.WORKER_S3_ACCESS_KEY_ID,
              secretAccessKey: config.WORKER_S3_SECRET_ACCESS_KEY,
            });
            if (config.WORKER_S3_CREATE_BUCKET) await store.ensureBucket();
            return store;
          },
        },
        {
          provide: ChecksRunner,
          inject: [ProcessGroups, REDACT, S3CheckLogStore],
          useFactory: (groups: ProcessGroups, redact: (t: string) => string, logs: S3CheckLogStore) =>
            new ChecksRunner({
              logs,
              runsDir: dir('runs'),
              // One cache for every case: the second install of a lockfile comes from disk.
              cacheDir: dir('cache'),
              inheritedEnv: process.env,
              redact,
              outputLimitBytes: config.WORKER_CHECK_OUTPUT_BYTES,
              killGraceMs: config.WORKER_KILL_GRACE_MS,
              groups,
            }),
        },
        {
          provide: BranchPublisher,
          inject: [Git, WorktreeManager],
          useFactory: (git: Git, w: WorktreeManager) => new BranchPublisher(git, w),
        },
        {
          // Without a token the pushed branch alone is the PR-ready result.
          provide: DRAFT_PULL_REQUESTS,
          useValue: config.WORKER_GITHUB_TOKEN
            ? new GitHubDraftPullRequests({
                apiUrl: config.WORKER_GITHUB_API_URL,
                token: config.WORKER_GITHUB_TOKEN,
              })
            : null,
        },
        {
          provide: WorkerMetrics,
          inject: [Registry],
          useFactory: (registry: Registry) => new WorkerMetrics(registry),
        },
        {
          provide: TaskProcessor,
          inject: [
            EventStore,
            RepositoryRegistry,
            WorktreeManager,
            RuntimeLauncher,
            ChecksRunner,
            BranchPublisher,
            DRAFT_PULL_REQUESTS,
            ROUTES,
            REDACT,
            PINO_LOGGER,
            WorkerMetrics,
          ],
          useFactory: (
            store: EventStore,
            repositories: RepositoryRegistry,
            worktrees: WorktreeManager,
            launcher: RuntimeLauncher,
            checks: ChecksRunner,
            publisher: BranchPublisher,
            draftPullRequests: DraftPullRequests | null,
            routes: RoutesFile,
            redact: (t: string) => string,
            logger: Logger,
            metrics: WorkerMetrics,
          ) =>
            new TaskProcessor({
              store,
              repositories,
              worktrees,
              launcher,
              checks,
              publisher,
              draftPullRequests,
              routes,
              redact,
              now: () => new Date(),
              logger: logger.child({ feature: 'tasks' }),
              metrics,
            }),
        },
        {
          provide: TargetHeadWatch,
          inject: [TaskProcessor, PINO_LOGGER],
          useFactory: (processor: TaskProcessor, logger: Logger) =>
            new TargetHeadWatch(
              processor,
              config.WORKER_TARGET_WATCH_INTERVAL_MS,
              logger.child({ feature: 'target-watch' }),
            ),
        },
      ],
    };
  }
}
