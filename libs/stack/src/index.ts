export * from './stack';
export * from './example-remote';
export {
  SERVICE_NAMES,
  ServiceName,
  ServiceProcess,
  ExitInfo,
  PortTakenError,
  serviceCommand,
} from './service-process';
export { followStream, StreamFollowerOptions } from './stream-follower';
