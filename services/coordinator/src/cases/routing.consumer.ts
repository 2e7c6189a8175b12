import { RecordedEvent } from '@caseloop/contracts';
import { JetStreamServer, Ledger } from '@caseloop/ledger';
import { PINO_LOGGER, ServiceHealth } from '@caseloop/platform';
import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { Logger } from 'pino';
import { CoordinatorConfig } from '../coordinator.config';
import { CaseHandler } from './case.handler';

export const ROUTING_CONFIG = Symbol('ROUTING_CONFIG');

/** The routing consumer's durable name: beside the service's own (`coordinator_routing`). */
export const routingConsumerName = (config: Pick<CoordinatorConfig, 'CONSUMER_NAME'>): string =>
  `${config.CONSUMER_NAME ?? 'coordinator'}_routing`;

/**
 * Routes new reports one at a time across every coordinator replica. Reports come through a durable
 * consumer of their own, filtered to intake's source subjects, with at most one message unacknowledged
 * (`max_ack_pending` 1): while one replica routes a report, no replica is handed the next. Each routing
 * first catches its identity model up with the stream, which by then holds the previous routing's
 * decision, so two reports of one problem arriving together cannot both open a case, even on a
 * clustered stream of a server that does not serialise expectations (nats-server #4320).
 * The cost is a routing at a time: milliseconds each, plus the embeddings call when one is set.
 * A replica lost mid-routing delays the next report by the routing ack wait
 * (COORDINATOR_ROUTING_ACK_WAIT_MS, seconds), after which it is redelivered: the delivery of a routing
 * that is still running is kept alive by the server, so the short ack wait does not redeliver it.
 */
@Injectable()
export class RoutingConsumer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private server: JetStreamServer | null = null;

  constructor(
    @Inject(Ledger) private readonly ledger: Ledger,
    @Inject(CaseHandler) private readonly cases: CaseHandler,
    @Inject(ServiceHealth) private readonly health: ServiceHealth,
    @Inject(ROUTING_CONFIG) private readonly config: CoordinatorConfig,
    @Inject(PINO_LOGGER) private readonly log: Logger,
  ) {}

  onApplicationBootstrap(): void {
    const c = this.config;
    const server = new JetStreamServer({
      ledger: this.ledger,
      producer: 'coordinator',
      durable: routingConsumerName(c),
      filterSubject: `${this.ledger.namespace}.source.*.intake`,
      concurrency: 1,
      capacity: 1,
      maxDeliver: c.CONSUMER_MAX_DELIVER,
      ackWaitMs: c.COORDINATOR_ROUTING_ACK_WAIT_MS,
      keepRunningAliveMs: c.CONSUMER_ACK_WAIT_MS,
      drainTimeoutMs: c.SHUTDOWN_TIMEOUT_MS,
    });
    server.addHandler(
      'SourceReceived',
      (e: RecordedEvent<'SourceReceived'>) => this.cases.onSourceReceived(e),
      true,
    );
    this.health.bindConsumer(server.consumerName, server.state, (cb) => server.on('status', cb));
    server.on('dead_letter', (seq, reason) =>
      this.log.error({ seq, reason }, 'a report could not be routed and was dead-lettered'),
    );
    server.listen(() => undefined);
    this.server = server;
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.server?.close();
  }
}
