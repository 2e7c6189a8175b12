import { runService } from '@caseloop/platform';
import { leaseConfig } from './lease.config';
import { LeaseModule } from './lease.module';

runService({ name: 'lease', config: leaseConfig, module: (config) => LeaseModule.forRoot(config) });
