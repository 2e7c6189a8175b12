import { runService } from '@caseloop/platform';
import { workerConfig } from './worker.config';
import { WorkerModule } from './worker.module';

runService({ name: 'worker', config: workerConfig, module: (config) => WorkerModule.forRoot(config) });
