// Prints the configuration reference (every key of every service, from the schemas themselves);
// README.md holds its output between the config-reference markers.
import { renderConfigReference } from '@caseloop/config-reference';
import { platformConfigShape } from '@caseloop/platform';
import { SERVICE_CONFIGS } from './service-configs';

process.stdout.write(renderConfigReference(SERVICE_CONFIGS, Object.keys(platformConfigShape)) + '\n');
