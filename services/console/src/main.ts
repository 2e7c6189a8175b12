import { runService } from '@caseloop/platform';
import { consoleConfig } from './console.config';
import { ConsoleModule } from './console.module';

// The console consumes nothing and appends nothing: it reads the projection and answers browsers.
runService({
  name: 'console',
  config: consoleConfig,
  module: (config) => ConsoleModule.forRoot(config),
  consumer: false,
});
