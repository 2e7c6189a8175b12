import { runService } from '@caseloop/platform';
import { leaseConfig } from './lease.config';
import { LeaseModule } from './lease.module';

// The lease service reacts to requests, not to ledger events: no durable consumer.
runService({
  name: 'lease',
  config: leaseConfig,
  module: (config) => LeaseModule.forRoot(config),
  consumer: false,
});
