import { Inject, Injectable, OnModuleDestroy, Optional } from '@nestjs/common';
import { JetStreamStatus, Ledger, StreamReplication } from '@caseloop/ledger';

export type NatsState = 'connected' | 'disconnected' | 'reconnecting' | 'closed';
export type TransportState = JetStreamStatus | 'disabled';

/** The instance marker (CASELOOP_INSTANCE_ID) a service repeats on `/healthz`, or null. */
export const SERVICE_INSTANCE = 'SERVICE_INSTANCE';

export interface HealthReport {
  service: string;
  /** CASELOOP_INSTANCE_ID when the starter set one: which process answers on this port. */
  instance?: string;
  status: 'ready' | 'not_ready';
  nats: { state: NatsState; server: string | null; jetstream: { stream: string; namespace: string } };
  transport: { state: TransportState; consumer: string | null };
  /** A service with more than one durable consumer (the coordinator's routing) lists the others here. */
  consumers?: Record<string, TransportState>;
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
  private readonly others = new Map<string, TransportState>();
  private watching = true;
  private replication: StreamReplication | null = null;

  constructor(
    @Inject(Ledger) private readonly ledger: Ledger,
    @Inject('SERVICE_NAME') private readonly service: string,
    @Optional() @Inject(SERVICE_INSTANCE) private readonly instance: string | null = null,
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

  /** A further durable consumer of the service: the service is ready only while every one consumes. */
  bindConsumer(
    consumer: string,
    initial: TransportState,
    changes: (cb: (s: JetStreamStatus) => void) => void,
  ): void {
    this.others.set(consumer, initial);
    changes((s) => this.others.set(consumer, s));
  }

  report(): HealthReport {
    const nats: NatsState = this.ledger.nc.isClosed() ? 'closed' : this.nats;
    const consuming = (t: TransportState) => t === 'consuming' || t === 'disabled';
    const transportReady = consuming(this.transport) && [...this.others.values()].every(consuming);
    return {
      service: this.service,
      ...(this.instance ? { instance: this.instance } : {}),
      status: nats === 'connected' && transportReady ? 'ready' : 'not_ready',
      nats: {
        state: nats,
        server: this.ledger.nc.info?.version ?? null,
        jetstream: { stream: this.ledger.stream, namespace: this.ledger.namespace },
      },
      transport: { state: this.transport, consumer: this.consumer },
      ...(this.others.size > 0 ? { consumers: Object.fromEntries(this.others) } : {}),
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
