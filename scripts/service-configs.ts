import type { ConfigDefinition } from '@caseloop/platform';
import { coordinatorConfig } from '../services/coordinator/src/coordinator.config';
import { evidenceConfig } from '../services/evidence/src/evidence.config';
import { intakeConfig } from '../services/intake/src/intake.config';
import { leaseConfig } from '../services/lease/src/lease.config';
import { monitorConfig } from '../services/monitor/src/monitor.config';
import { workerConfig } from '../services/worker/src/worker.config';
import { consoleConfig } from '../services/console/src/console.config';

/**
 * Every service's one config definition, in pipeline order: the list the configuration reference
 * is rendered from. It lives here, above the services, so the reference library imports none.
 */
export const SERVICE_CONFIGS: Record<string, ConfigDefinition> = {
  intake: intakeConfig as unknown as ConfigDefinition,
  coordinator: coordinatorConfig as unknown as ConfigDefinition,
  worker: workerConfig as unknown as ConfigDefinition,
  lease: leaseConfig as unknown as ConfigDefinition,
  evidence: evidenceConfig as unknown as ConfigDefinition,
  monitor: monitorConfig as unknown as ConfigDefinition,
  console: consoleConfig as unknown as ConfigDefinition,
};
