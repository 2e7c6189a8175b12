import { isProducer, ServiceId } from '@caseloop/contracts';
import { DynamicModule, Global, Inject, Injectable, Module, OnApplicationShutdown } from '@nestjs/common';
import { connectLedger, Ledger, LedgerOptions } from '../connect';
import { EventStore } from '../event-store';
import { JetStreamClient } from './jetstream.client';

export const LEDGER_OPTIONS = Symbol('LEDGER_OPTIONS');

export interface LedgerModuleOptions extends LedgerOptions {
  /** A producer gets a `JetStreamClient` for its own events; a reader gets none. */
  name: ServiceId;
  /** Create or converge the streams on boot (single-user setups and tests; production provisions separately). */
  provision?: boolean;
}

@Injectable()
class LedgerLifecycle implements OnApplicationShutdown {
  constructor(@Inject(Ledger) private readonly ledger: Ledger) {}

  /** Runs after the transport drained (Nest closes microservices before shutdown hooks). */
  async onApplicationShutdown(): Promise<void> {
    await this.ledger.close();
  }
}

/**
 * Provides `Ledger` (the connection), `EventStore` and a `JetStreamClient` for the service's own
 * producer. Global: feature modules inject `EventStore` without importing anything.
 */
@Global()
@Module({})
export class LedgerModule {
  static forRoot(options: LedgerModuleOptions): DynamicModule {
    const name = options.name;
    return {
      module: LedgerModule,
      providers: [
        { provide: LEDGER_OPTIONS, useValue: options },
        {
          provide: Ledger,
          useFactory: async (): Promise<Ledger> => {
            const ledger = await connectLedger(options);
            if (options.provision) await ledger.provision();
            return ledger;
          },
        },
        { provide: EventStore, useFactory: (l: Ledger) => l.store, inject: [Ledger] },
        ...(isProducer(name)
          ? [
              {
                provide: JetStreamClient,
                useFactory: (l: Ledger) => new JetStreamClient(l, name),
                inject: [Ledger],
              },
            ]
          : []),
        LedgerLifecycle,
      ],
      exports: [Ledger, EventStore, ...(isProducer(name) ? [JetStreamClient] : []), LEDGER_OPTIONS],
    };
  }
}
