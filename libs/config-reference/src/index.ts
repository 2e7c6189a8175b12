export * from './config-reference';
export * from './service-configs';
