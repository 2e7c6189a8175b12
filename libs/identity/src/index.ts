export * from './text';
export * from './signatures';
export * from './identity.config';
export * from './identity.index';
export * from './replay';
export * from './evaluation';
export * from './embeddings.port';
export * from './stats';
