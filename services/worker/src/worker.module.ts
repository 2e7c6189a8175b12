import { DynamicModule, Module } from '@nestjs/common';
import { WorkerConfig } from './worker.config';

export const WORKER_CONFIG = Symbol('WORKER_CONFIG');

/** Composition root of the worker service; the ledger, health and metrics come from the platform. */
@Module({})
export class WorkerModule {
  static forRoot(config: WorkerConfig): DynamicModule {
    return {
      module: WorkerModule,
      providers: [{ provide: WORKER_CONFIG, useValue: config }],
      exports: [WORKER_CONFIG],
    };
  }
}
