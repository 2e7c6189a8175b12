import { DynamicModule, Module } from '@nestjs/common';
import { MonitorConfig } from './monitor.config';

export const MONITOR_CONFIG = Symbol('MONITOR_CONFIG');

/** Composition root of the monitor service; the ledger, health and metrics come from the platform. */
@Module({})
export class MonitorModule {
  static forRoot(config: MonitorConfig): DynamicModule {
    return {
      module: MonitorModule,
      providers: [{ provide: MONITOR_CONFIG, useValue: config }],
      exports: [MONITOR_CONFIG],
    };
  }
}
