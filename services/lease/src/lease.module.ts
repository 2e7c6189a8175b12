import { DynamicModule, Module } from '@nestjs/common';
import { LeaseConfig } from './lease.config';
import { LeasesModule } from './leases/leases.module';

export const LEASE_CONFIG = Symbol('LEASE_CONFIG');

/** Composition root of the lease service; the ledger, health and metrics come from the platform. */
@Module({})
export class LeaseModule {
  static forRoot(config: LeaseConfig): DynamicModule {
    return {
      module: LeaseModule,
      imports: [
        LeasesModule.forRoot({
          namespace: config.CASELOOP_NAMESPACE,
          bucket: config.LEASE_BUCKET,
          skewMs: config.LEASE_SKEW_MS,
          sweepIntervalMs: config.LEASE_SWEEP_INTERVAL_MS,
          claimMs: config.LEASE_CLAIM_MS,
          history: config.LEASE_BUCKET_HISTORY,
        }),
      ],
      providers: [{ provide: LEASE_CONFIG, useValue: config }],
      exports: [LEASE_CONFIG],
    };
  }
}
