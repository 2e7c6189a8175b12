import { runService } from '@caseloop/platform';
import { intakeConfig } from './intake.config';
import { IntakeModule } from './intake.module';

runService({ name: 'intake', config: intakeConfig, module: (config) => IntakeModule.forRoot(config) });
