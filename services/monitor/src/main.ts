import { runService } from '@caseloop/platform';
import { monitorConfig } from './monitor.config';
import { MonitorModule } from './monitor.module';

runService({ name: 'monitor', config: monitorConfig, module: (config) => MonitorModule.forRoot(config) });
