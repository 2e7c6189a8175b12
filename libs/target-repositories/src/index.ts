export * from './repository.schema';
export * from './repositories.loader';
