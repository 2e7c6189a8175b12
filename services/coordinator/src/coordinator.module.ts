import { DynamicModule, Module } from '@nestjs/common';
import { CasesModule } from './cases/cases.module';
import { CoordinatorConfig } from './coordinator.config';

export const COORDINATOR_CONFIG = Symbol('COORDINATOR_CONFIG');

/** Composition root of the coordinator service; the ledger, health and metrics come from the platform. */
@Module({})
export class CoordinatorModule {
  static forRoot(config: CoordinatorConfig): DynamicModule {
    return {
      module: CoordinatorModule,
      imports: [CasesModule.forRoot(config)],
      providers: [{ provide: COORDINATOR_CONFIG, useValue: config }],
      exports: [COORDINATOR_CONFIG],
    };
  }
}
