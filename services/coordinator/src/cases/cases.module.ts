import { Counter, Registry } from 'prom-client';
import { EmbeddingsPort } from '@caseloop/identity';
import { EventStore, Ledger } from '@caseloop/ledger';
import { PINO_LOGGER } from '@caseloop/platform';
import {
  DynamicModule,
  Inject,
  Injectable,
  Module,
  OnApplicationBootstrap,
  OnApplicationShutdown,
} from '@nestjs/common';
import { Logger } from 'pino';
import { CoordinatorConfig } from '../coordinator.config';
import { CoordinatorSettings, loadSettings } from '../coordinator.settings';
import { OpenAiEmbeddingsAdapter } from '../identity/embeddings.adapter';
import { IdentityReadModel } from '../identity/identity.read-model';
import { catchUpIdentityReadModel, loadIdentityReadModel } from '../identity/read-model.loader';
import { ClockService } from '../scheduling/clock.service';
import { CaseHandler } from './case.handler';
import { CasesConsumer } from './cases.consumer';
import { ROUTING_CONFIG, RoutingConsumer } from './routing.consumer';

export const COORDINATOR_SETTINGS = Symbol('COORDINATOR_SETTINGS');
export const EMBEDDINGS = Symbol('EMBEDDINGS');
const CLOCK_INTERVAL = Symbol('CLOCK_INTERVAL');

@Injectable()
class CasesLifecycle implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(
    @Inject(Ledger) private readonly ledger: Ledger,
    @Inject(IdentityReadModel) private readonly model: IdentityReadModel,
    @Inject(CaseHandler) private readonly cases: CaseHandler,
    @Inject(ClockService) private readonly clock: ClockService,
    @Inject(EMBEDDINGS) private readonly embeddings: EmbeddingsPort | null,
    @Inject(PINO_LOGGER) private readonly log: Logger,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    // Where the start-up load ended; each routing first applies what other replicas recorded since.
    let caughtUp =
      (await this.ledger.jsm.streams.info(this.ledger.stream).catch(() => null))?.state.last_seq ?? 0;
    const loading = loadIdentityReadModel(this.ledger, this.model);
    this.cases.waitFor(loading.catch(() => undefined));
    this.cases.catchUpWith(async () => {
      caughtUp = await catchUpIdentityReadModel(this.ledger, this.model, caughtUp);
    });
    const applied = await loading;
    this.log.info({ applied, openCases: this.model.openCases().length }, 'identity read model rebuilt');
    // A stop between recording a routing and writing it on the case is mended now, not at a redelivery.
    const finished = await this.cases.finishUnfinishedRoutes().catch((e: unknown) => {
      this.log.warn(
        { err: (e as Error).message },
        'could not finish interrupted routings; the clock retries',
      );
      return 0;
    });
    if (finished > 0) this.log.info({ finished }, 'interrupted routings finished');
    this.clock.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.clock.stop();
    await this.embeddings?.close();
  }
}

/** Case identity, triage, dispatch, the completion gate and the clock. */
@Module({})
export class CasesModule {
  static forRoot(config: CoordinatorConfig): DynamicModule {
    return {
      module: CasesModule,
      controllers: [CasesConsumer],
      providers: [
        { provide: COORDINATOR_SETTINGS, useFactory: () => loadSettings(config) },
        { provide: CLOCK_INTERVAL, useValue: config.COORDINATOR_CLOCK_INTERVAL_MS },
        { provide: ROUTING_CONFIG, useValue: config },
        {
          provide: EMBEDDINGS,
          useFactory: (): EmbeddingsPort | null =>
            config.COORDINATOR_EMBEDDINGS_URL
              ? new OpenAiEmbeddingsAdapter({
                  url: config.COORDINATOR_EMBEDDINGS_URL,
                  keyFile: config.COORDINATOR_EMBEDDINGS_KEY_FILE ?? null,
                  model: config.COORDINATOR_EMBEDDINGS_MODEL,
                  timeoutMs: config.COORDINATOR_EMBEDDINGS_TIMEOUT_MS,
                })
              : null,
        },
        {
          provide: IdentityReadModel,
          inject: [COORDINATOR_SETTINGS],
          useFactory: (s: CoordinatorSettings) => new IdentityReadModel(s.identity, s.privateMarkers),
        },
        {
          provide: CaseHandler,
          inject: [EventStore, IdentityReadModel, COORDINATOR_SETTINGS, EMBEDDINGS, PINO_LOGGER, Registry],
          useFactory: (
            store: EventStore,
            model: IdentityReadModel,
            s: CoordinatorSettings,
            emb: EmbeddingsPort | null,
            log: Logger,
            registry: Registry,
          ) => {
            const judgements = new Counter({
              name: 'caseloop_identity_judgements_total',
              help: 'Reports a judgement route was asked about (best open case at or above the ask floor), by verdict (fallback: no usable answer, the offline decision stood)',
              labelNames: ['route', 'verdict', 'fallback'],
              registers: [registry],
            });
            const readiness = new Counter({
              name: 'caseloop_readiness_judgements_total',
              help: 'Conversations a readiness judgement route was asked about, by outcome (judged, or the fallback reason: timeout, error, invalid_answer — the readiness rules decided)',
              labelNames: ['route', 'outcome'],
              registers: [registry],
            });
            return new CaseHandler(store, model, s, emb, log, undefined, null, {
              judged: (j) =>
                judgements.inc({
                  route: j.route,
                  verdict: j.verdict,
                  fallback: j.fallback?.reason ?? 'none',
                }),
              readinessJudged: (j) =>
                readiness.inc({ route: j.route, outcome: j.fallback?.reason ?? 'judged' }),
            });
          },
        },
        {
          provide: ClockService,
          inject: [EventStore, CaseHandler, IdentityReadModel, CLOCK_INTERVAL, PINO_LOGGER],
          useFactory: (
            store: EventStore,
            cases: CaseHandler,
            model: IdentityReadModel,
            interval: number,
            log: Logger,
          ) => new ClockService(store, cases, model, interval, log),
        },
        CasesLifecycle,
        RoutingConsumer,
      ],
      exports: [CaseHandler, ClockService, IdentityReadModel],
    };
  }
}
