import { runService } from '@caseloop/platform';
import { evidenceConfig } from './evidence.config';
import { EvidenceModule } from './evidence.module';

runService({ name: 'evidence', config: evidenceConfig, module: (config) => EvidenceModule.forRoot(config) });
