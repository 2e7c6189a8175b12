import { runService } from '@caseloop/platform';
import { monitorConfig } from './monitor.config';
import { MonitorModule } from './monitor.module';

// The monitor consumes nothing: it reads the projection and the ledger on its own heartbeat.
runService({
  name: 'monitor',
  config: monitorConfig,
  module: (config) => MonitorModule.forRoot(config),
  consumer: false,
});
