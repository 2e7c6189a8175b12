import { DynamicModule, Module } from '@nestjs/common';
import { IntakeConfig } from './intake.config';

export const INTAKE_CONFIG = Symbol('INTAKE_CONFIG');

/** Composition root of the intake service; the ledger, health and metrics come from the platform. */
@Module({})
export class IntakeModule {
  static forRoot(config: IntakeConfig): DynamicModule {
    return {
      module: IntakeModule,
      providers: [{ provide: INTAKE_CONFIG, useValue: config }],
      exports: [INTAKE_CONFIG],
    };
  }
}
