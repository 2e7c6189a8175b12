export * from './repository.schema';
export * from './repositories.loader';
export * from './repository.inspector';
export * from './repository.entry';
export * from './step.environment';
