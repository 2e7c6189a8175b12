import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { JetStreamStatus, Ledger, StreamReplication } from '@caseloop/ledger';

export type NatsState = 'connected' | 'disconnected' | 'reconnecting' | 'closed';
export type TransportState = JetStreamStatus | 'disabled';

export interface HealthReport {
  service: string;
  status: 'ready' | 'not_ready';
  nats: { state: NatsState; server: string | null; jetstream: { stream: string; namespace: string } };
  transport: { state: TransportState; consumer: string | null };
  /**
   * The ledger stream's replication as last read: `degraded` (a replica offline or behind, quorum
   * holds, the service works) and `no_leader` (an election; appends wait and retry) do not make the
   * service unready — restarting it would not help — but show what the cluster is going through.
   */
  cluster: {
    state: StreamReplication['state'];
    replicas: number | null;
    leader: string | null;
    lagging: string[];
    unserialisedChecks: boolean;
    reconnects: number;
  };
}

/** Readiness = NATS connected and, for a consuming service, its consumer running. */
@Injectable()
export class ServiceHealth implements OnModuleDestroy {
  private nats: NatsState = 'connected';
  private transport: TransportState = 'disabled';
  private consumer: string | null = null;
  private watching = true;
  private replication: StreamReplication | null = null;

  constructor(
    @Inject(Ledger) private readonly ledger: Ledger,
    @Inject('SERVICE_NAME') private readonly service: string,
  ) {
    void this.watch();
    ledger.store.observe({
      replication: (r) => {
        this.replication = r;
      },
    });
  }

  bindTransport(
    consumer: string,
    initial: TransportState,
    changes: (cb: (s: JetStreamStatus) => void) => void,
  ): void {
    this.consumer = consumer;
    this.transport = initial;
    changes((s) => {
      this.transport = s;
    });
  }

  report(): HealthReport {
    const nats: NatsState = this.ledger.nc.isClosed() ? 'closed' : this.nats;
    const transportReady = this.transport === 'consuming' || this.transport === 'disabled';
    return {
      service: this.service,
      status: nats === 'connected' && transportReady ? 'ready' : 'not_ready',
      nats: {
        state: nats,
        server: this.ledger.nc.info?.version ?? null,
        jetstream: { stream: this.ledger.stream, namespace: this.ledger.namespace },
      },
      transport: { state: this.transport, consumer: this.consumer },
      cluster: {
        state: this.replication?.state ?? 'unknown',
        replicas: this.replication?.replicas ?? null,
        leader: this.replication?.leader ?? null,
        lagging: this.replication?.lagging ?? [],
        unserialisedChecks: this.replication?.unserialisedChecks ?? false,
        reconnects: this.ledger.reconnects,
      },
    };
  }

  onModuleDestroy(): void {
    this.watching = false;
  }

  private async watch(): Promise<void> {
    for await (const s of this.ledger.nc.status()) {
      if (!this.watching) break;
      switch (s.type) {
        case 'disconnect':
          this.nats = 'disconnected';
          break;
        case 'reconnecting':
          this.nats = 'reconnecting';
          break;
        case 'reconnect':
          this.nats = 'connected';
          break;
        default:
          break;
      }
    }
  }
}
