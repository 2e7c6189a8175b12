export * from './main';
export * from './commands';
export * from './cli.context';
export * from './cli.config';
export * from './cli.errors';
export * from './event-format';
export * from './commands/channel-history';
export { DEFAULT_REPOSITORIES_FILE, REPO_COMMAND_DESCRIPTION } from './commands/repo.commands';
