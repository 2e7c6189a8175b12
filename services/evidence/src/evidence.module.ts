import { Ledger } from '@caseloop/ledger';
import { LeaseClient } from '@caseloop/lease-client';
import { DynamicModule, Module } from '@nestjs/common';
import { LeaseClientAdapter } from './browser/lease-client.adapter';
import { EvidenceConfig } from './evidence.config';
import { LEASE_PORT, ValidationModule } from './validation/validation.module';

export const EVIDENCE_CONFIG = Symbol('EVIDENCE_CONFIG');

/** Composition root of the evidence service; the ledger, health and metrics come from the platform. */
@Module({})
export class EvidenceModule {
  static forRoot(config: EvidenceConfig): DynamicModule {
    return {
      module: EvidenceModule,
      imports: [
        ValidationModule.forRoot(config, {
          provide: LEASE_PORT,
          inject: [Ledger],
          // The lease client shares the ledger's NATS connection, closed with it on shutdown.
          useFactory: (ledger: Ledger) =>
            new LeaseClientAdapter(() =>
              LeaseClient.connect(ledger.nc, { namespace: ledger.namespace, bucket: config.LEASE_BUCKET }),
            ),
        }),
      ],
      providers: [{ provide: EVIDENCE_CONFIG, useValue: config }],
      exports: [EVIDENCE_CONFIG],
    };
  }
}
