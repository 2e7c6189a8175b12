import { DynamicModule, Module } from '@nestjs/common';
import { EvidenceConfig } from './evidence.config';

export const EVIDENCE_CONFIG = Symbol('EVIDENCE_CONFIG');

/** Composition root of the evidence service; the ledger, health and metrics come from the platform. */
@Module({})
export class EvidenceModule {
  static forRoot(config: EvidenceConfig): DynamicModule {
    return {
      module: EvidenceModule,
      providers: [{ provide: EVIDENCE_CONFIG, useValue: config }],
      exports: [EVIDENCE_CONFIG],
    };
  }
}
