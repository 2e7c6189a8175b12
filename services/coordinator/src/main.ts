import { runService } from '@caseloop/platform';
import { coordinatorConfig } from './coordinator.config';
import { CoordinatorModule } from './coordinator.module';

runService({
  name: 'coordinator',
  config: coordinatorConfig,
  module: (config) => CoordinatorModule.forRoot(config),
});
