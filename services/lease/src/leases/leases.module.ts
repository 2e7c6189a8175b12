import { Ledger } from '@caseloop/ledger';
import { DynamicModule, Inject, Injectable, Module, OnModuleDestroy } from '@nestjs/common';
import { LeaseGrants } from './lease-grants';
import { LeaseHolders } from './lease-holders';
import { LeaseLine } from './lease-line';
import { LeaseManager } from './lease.manager';
import { LeaseMetrics } from './lease.metrics';
import { LeaseRecorder } from './lease.recorder';
import { LeaseRequests } from './lease-requests';
import { LeaseRpcServer } from './lease-rpc.server';
import { LEASE_CLOCK, LEASE_SETTINGS, LeaseSettings } from './lease.settings';
import { LeaseStore } from './lease.store';

@Injectable()
class LeaseStoreLifecycle implements OnModuleDestroy {
  constructor(@Inject(LeaseStore) private readonly store: LeaseStore) {}
  onModuleDestroy(): void {
    this.store.close();
  }
}

/**
 * Leases on the KV bucket: the manager (with its line, grants, holder operations and request
 * entries), its request/reply endpoint, the sweep, the ledger recorder.
 */
@Module({})
export class LeasesModule {
  static forRoot(settings: LeaseSettings): DynamicModule {
    return {
      module: LeasesModule,
      providers: [
        { provide: LEASE_SETTINGS, useValue: settings },
        { provide: LEASE_CLOCK, useValue: () => Date.now() },
        {
          provide: LeaseStore,
          useFactory: (ledger: Ledger) => LeaseStore.open(ledger.js, settings.bucket, settings.history),
          inject: [Ledger],
        },
        {
          provide: LeaseRecorder,
          useFactory: (ledger: Ledger, store: LeaseStore) => new LeaseRecorder(ledger.store, store.epoch),
          inject: [Ledger, LeaseStore],
        },
        LeaseStoreLifecycle,
        LeaseMetrics,
        LeaseRequests,
        LeaseLine,
        LeaseGrants,
        LeaseHolders,
        LeaseManager,
        LeaseRpcServer,
      ],
      exports: [LeaseManager],
    };
  }
}
