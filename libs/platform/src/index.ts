export * from './config';
export * from './logger';
export * from './service-health';
export * from './health.controller';
export * from './platform.module';
export * from './bootstrap';
export * from './file-lock';
export * from './git-locks';
