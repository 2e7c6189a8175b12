import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { ulidFrom } from '@caseloop/contracts';
import { EventStore } from '@caseloop/ledger';
import { loadRepositoriesFile } from '@caseloop/target-repositories';
import { DynamicModule, Module, Provider } from '@nestjs/common';
import { ChromiumBrowser } from '../browser/chromium.browser';
import { ClientValidationRunner } from '../browser/client-validation.runner';
import { LeasePort } from '../browser/lease.port';
import { EvidenceLinksController } from '../storage/evidence-links.controller';
import { S3ArtifactStore } from '../storage/s3-artifact.store';
import { RepositorySetupSteps } from '../code/app-setup';
import { GitCaseCode } from '../code/case-code.source';
import { EvidenceConsumer } from './evidence.consumer';
import { EvidenceValidationConfig } from './evidence-validation.config';
import { EvidenceHandler } from './evidence.handler';

export const LEASE_PORT = Symbol('LEASE_PORT');
const CHECK_LOGS = Symbol('CHECK_LOGS');

/**
 * Client validation, review, storage and the receipt, composed from the evidence config.
 * `leases` provides LEASE_PORT: the lease service's client, created and closed by its own provider.
 */
@Module({})
export class ValidationModule {
  static forRoot(config: EvidenceValidationConfig, leases: Provider): DynamicModule {
    return {
      module: ValidationModule,
      controllers: [EvidenceConsumer, EvidenceLinksController],
      providers: [
        leases,
        {
          provide: S3ArtifactStore,
          useFactory: async () => {
            const store = new S3ArtifactStore({
              endpoint: config.EVIDENCE_S3_ENDPOINT ?? null,
              region: config.EVIDENCE_S3_REGION,
              bucket: config.EVIDENCE_S3_BUCKET,
              forcePathStyle: config.EVIDENCE_S3_FORCE_PATH_STYLE,
              accessKeyId: config.EVIDENCE_S3_ACCESS_KEY_ID,
              secretAccessKey: config.EVIDENCE_S3_SECRET_ACCESS_KEY,
              presignTtlSeconds: config.EVIDENCE_S3_PRESIGN_TTL_SECONDS,
            });
            if (config.EVIDENCE_S3_CREATE_BUCKET) await store.ensureBucket();
            return store;
          },
        },
        {
          // The worker's check logs: a bucket of their own, or this service's bucket (one client then).
          provide: CHECK_LOGS,
          inject: [S3ArtifactStore],
          useFactory: (own: S3ArtifactStore) =>
            !config.EVIDENCE_CHECK_LOG_BUCKET ||
            config.EVIDENCE_CHECK_LOG_BUCKET === config.EVIDENCE_S3_BUCKET
              ? own
              : new S3ArtifactStore({
                  endpoint: config.EVIDENCE_S3_ENDPOINT ?? null,
                  region: config.EVIDENCE_S3_REGION,
                  bucket: config.EVIDENCE_CHECK_LOG_BUCKET,
                  forcePathStyle: config.EVIDENCE_S3_FORCE_PATH_STYLE,
                  accessKeyId: config.EVIDENCE_S3_ACCESS_KEY_ID,
                  secretAccessKey: config.EVIDENCE_S3_SECRET_ACCESS_KEY,
                  presignTtlSeconds: config.EVIDENCE_S3_PRESIGN_TTL_SECONDS,
                }),
        },
        {
          provide: ClientValidationRunner,
          inject: [LEASE_PORT],
          useFactory: (leasePort: LeasePort) =>
            new ClientValidationRunner(
              new ChromiumBrowser({
                executablePath: config.EVIDENCE_BROWSER_EXECUTABLE,
                args: config.EVIDENCE_BROWSER_ARGS,
                launchTimeoutMs: config.EVIDENCE_BROWSER_LAUNCH_TIMEOUT_MS,
              }),
              leasePort,
              {
                leaseTtlMs: config.EVIDENCE_LEASE_TTL_MS,
                leaseWaitMs: config.EVIDENCE_LEASE_WAIT_MS,
                renewWithinMs: config.EVIDENCE_LEASE_RENEW_WITHIN_MS,
                readyTimeoutMs: config.EVIDENCE_APP_READY_TIMEOUT_MS,
                stepTimeoutMs: config.EVIDENCE_STEP_TIMEOUT_MS,
                flowTimeoutMs: config.EVIDENCE_FLOW_TIMEOUT_MS,
                viewport: { width: 1280, height: 800 },
                trace: config.EVIDENCE_BROWSER_TRACE,
                // The cache the setup steps below ran with: a client started through corepack finds its package manager there.
                cacheDir: join(config.EVIDENCE_DIR, 'cache'),
              },
              { now: Date.now, newCaptureId: () => `cap-${ulidFrom(Date.now(), randomBytes(10))}` },
            ),
        },
        {
          provide: EvidenceHandler,
          inject: [EventStore, S3ArtifactStore, ClientValidationRunner, CHECK_LOGS],
          useFactory: (
            store: EventStore,
            artifacts: S3ArtifactStore,
            runner: ClientValidationRunner,
            checkLogs: S3ArtifactStore,
          ) => {
            const repositories = loadRepositoriesFile(config.EVIDENCE_REPOSITORIES_FILE).repositories;
            return new EvidenceHandler({
              store,
              artifacts,
              runner,
              code: new GitCaseCode({ dir: config.EVIDENCE_DIR, timeoutMs: config.EVIDENCE_GIT_TIMEOUT_MS }),
              // The same install as the worker's: the repository's env and secret files, this service's own cache.
              setup: new RepositorySetupSteps({
                runsDir: join(config.EVIDENCE_DIR, 'runs'),
                cacheDir: join(config.EVIDENCE_DIR, 'cache'),
              }),
              checkLogs: { read: (key) => checkLogs.readIfPresent(key) },
              repository: (id) => repositories.find((r) => r.id === id),
              resource: config.EVIDENCE_BROWSER_RESOURCE,
              linkBase: config.EVIDENCE_PUBLIC_URL ?? null,
              now: () => new Date(),
            });
          },
        },
      ],
      exports: [S3ArtifactStore, EvidenceHandler],
    };
  }
}
