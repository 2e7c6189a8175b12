import { assertSafeId, Producer } from '@caseloop/contracts';
import { connect, JetStreamClient, JetStreamManager, NatsConnection } from 'nats';
import { DeadLetterWriter } from './consumer-dead-letters';
import { EventStore } from './event-store';
import { provisionStreams, ProvisionResult } from './provision';
import { ConnectionState, watchConnection } from './replication';
import { ServerFeatures, serverFeatures } from './server-features';

export interface LedgerOptions {
  servers: string | string[];
  namespace: string;
  stream: string;
  /** The connecting service (or tool); also the NATS connection name. */
  name: Producer | string;
  user?: string;
  pass?: string;
  /** How long an append keeps retrying through a leader change before it fails (default 30 s). */
  timeoutMs?: number;
  /** Ack wait of one publish attempt (default 3 s) and API timeout. */
  attemptTimeoutMs?: number;
  /** Expectation message ids (see EventStoreOptions.expectationIds); `auto` by default. */
  expectationIds?: 'auto' | 'event' | 'slot';
  /** Replicas for provisioned streams (>1 needs nats-server >= 2.9.21). */
  replicas?: number;
}

/** One NATS connection with the event store and dead-letter writer over it. Close it on shutdown. */
export class Ledger {
  readonly store: EventStore;
  readonly deadLetters: DeadLetterWriter;
  readonly features: ServerFeatures;
  private connState: ConnectionState = 'connected';
  /** Reconnections since connect (a node lost, a network blip). */
  reconnects = 0;

  constructor(
    readonly nc: NatsConnection,
    readonly js: JetStreamClient,
    readonly jsm: JetStreamManager,
    readonly options: Readonly<LedgerOptions>,
  ) {
    this.features = serverFeatures(nc.info?.version ?? '0.0.0');
    watchConnection(nc, (s) => {
      if (s === 'connected' && this.connState !== 'connected') this.reconnects++;
      this.connState = s;
    });
    this.store = new EventStore(nc, jsm, {
      namespace: options.namespace,
      stream: options.stream,
      features: this.features,
      connection: () => (nc.isClosed() ? 'closed' : this.connState),
      ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
      ...(options.attemptTimeoutMs ? { attemptTimeoutMs: options.attemptTimeoutMs } : {}),
      ...(options.expectationIds ? { expectationIds: options.expectationIds } : {}),
    });
    this.deadLetters = new DeadLetterWriter(js, options.namespace);
  }

  get connection(): ConnectionState {
    return this.nc.isClosed() ? 'closed' : this.connState;
  }

  get namespace(): string {
    return this.options.namespace;
  }

  get stream(): string {
    return this.options.stream;
  }

  /** Creates or converges the ledger and dead-letter streams. Needs the provisioning user's permissions. */
  provision(): Promise<ProvisionResult> {
    return provisionStreams(
      this.jsm,
      { namespace: this.namespace, stream: this.stream },
      this.features,
      this.options.replicas ?? 1,
    );
  }

  /** Drains (in-flight publishes and subscriptions finish), then closes. Safe to call twice. */
  async close(): Promise<void> {
    if (this.nc.isClosed()) return;
    try {
      await this.nc.drain();
    } catch {
      // Draining a connection that is already closing: closed() settles below either way.
    }
    await this.nc.closed();
  }
}

export async function connectLedger(opts: LedgerOptions): Promise<Ledger> {
  assertSafeId('namespace', opts.namespace);
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(opts.stream))
    throw new Error(`stream name ${JSON.stringify(opts.stream)} is not valid`);
  const nc = await connect({
    servers: opts.servers,
    name: `caseloop-${opts.name}`,
    ...(opts.user !== undefined ? { user: opts.user } : {}),
    ...(opts.pass !== undefined ? { pass: opts.pass } : {}),
    // Building an error stack per request costs about a third of the client's CPU on pipelined publishes.
    noAsyncTraces: true,
    reconnect: true,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    waitOnFirstConnect: false,
  });
  const timeout = 10_000;
  // checkAPI off: the restricted service users are not granted `$JS.API.INFO`.
  const jsm = await nc.jetstreamManager({ timeout, checkAPI: false });
  const js = nc.jetstream({ timeout, checkAPI: false });
  return new Ledger(nc, js, jsm, opts);
}
