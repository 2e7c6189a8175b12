import { DynamicModule, Module } from '@nestjs/common';
import { WorkerTasksModule } from './tasks/tasks.module';
import { WorkerConfig } from './worker.config';

export const WORKER_CONFIG = Symbol('WORKER_CONFIG');

/** Composition root of the worker service; the ledger, health and metrics come from the platform. */
@Module({})
export class WorkerModule {
  static forRoot(config: WorkerConfig): DynamicModule {
    return {
      module: WorkerModule,
      imports: [WorkerTasksModule.forRoot(config)],
      providers: [{ provide: WORKER_CONFIG, useValue: config }],
      exports: [WORKER_CONFIG],
    };
  }
}
