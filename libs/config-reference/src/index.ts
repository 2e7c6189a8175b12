export * from './config-reference';
