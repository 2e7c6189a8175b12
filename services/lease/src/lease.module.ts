import { DynamicModule, Module } from '@nestjs/common';
import { LeaseConfig } from './lease.config';

export const LEASE_CONFIG = Symbol('LEASE_CONFIG');

/** Composition root of the lease service; the ledger, health and metrics come from the platform. */
@Module({})
export class LeaseModule {
  static forRoot(config: LeaseConfig): DynamicModule {
    return {
      module: LeaseModule,
      providers: [{ provide: LEASE_CONFIG, useValue: config }],
      exports: [LEASE_CONFIG],
    };
  }
}
