import { eventDefinition, EventType, Producer } from '@caseloop/contracts';
import { ClientProxy, ReadPacket, WritePacket } from '@nestjs/microservices';
import { NatsConnection } from 'nats';
import { Ledger } from '../connect';
import { LedgerError } from '../errors';
import { AppendResult } from '../event-store';

/** What `client.emit('<EventType>', command)` carries: one event of the client's own producer. */
export interface EmitEvent {
  aggregateId: string;
  commandId: string;
  causationId: string | null;
  correlationId: string;
  occurredAt: string;
  data: unknown;
  expectedSeq?: number;
}

/**
 * `ClientProxy` over the event store: `emit(type, event)` appends one event (validated, with its
 * deterministic msg id and optional expectation) and completes with the AppendResult. The ledger
 * has no request/response: `send()` fails. Prefer `EventStore.handle` inside a service; this client
 * exists for code written against Nest's ClientProxy.
 */
export class JetStreamClient extends ClientProxy {
  constructor(
    private readonly ledger: Ledger,
    private readonly producer: Producer,
  ) {
    super();
  }

  connect(): Promise<Ledger> {
    return Promise.resolve(this.ledger);
  }

  /** The connection belongs to the Ledger provider, which closes it on shutdown. */
  close(): void {}

  unwrap<T = NatsConnection>(): T {
    return this.ledger.nc as T;
  }

  protected publish(_packet: ReadPacket, callback: (packet: WritePacket) => void): () => void {
    callback({ err: new Error('the ledger has no request/response; use emit()'), isDisposed: true });
    return () => undefined;
  }

  protected async dispatchEvent<T = AppendResult>(packet: ReadPacket<EmitEvent>): Promise<T> {
    const type = typeof packet.pattern === 'string' ? packet.pattern : String(packet.pattern);
    const def = eventDefinition(type);
    if (!def) throw new LedgerError('append_refused', `no such event type ${type}`);
    if (def.producer !== this.producer) {
      throw new LedgerError('permission_denied', `${type} belongs to ${def.producer}, not ${this.producer}`);
    }
    const e = packet.data;
    const result = await this.ledger.store.append({
      aggregate: def.aggregate,
      aggregateId: e.aggregateId,
      producer: this.producer,
      commandId: e.commandId,
      causationId: e.causationId,
      correlationId: e.correlationId,
      occurredAt: e.occurredAt,
      events: [{ type: type as EventType, data: e.data } as never],
      ...(e.expectedSeq !== undefined ? { expectedSeq: e.expectedSeq } : {}),
    });
    return result as T;
  }
}
