import { LoggerService } from '@nestjs/common';
import pino, { Logger } from 'pino';

/** Keys whose values never reach a log line, at any of the depths structured logs use. */
const SECRET_KEYS = [
  'password',
  'pass',
  'token',
  'secret',
  'authorization',
  'apiKey',
  'accessKey',
  'secretAccessKey',
  'cookie',
];

export function redactionPaths(extraKeys: readonly string[] = []): string[] {
  const keys = [...SECRET_KEYS, ...extraKeys];
  return keys.flatMap((k) => [k, `*.${k}`, `*.*.${k}`, `headers.${k}`]);
}

export function createLogger(opts: {
  name: string;
  level?: string;
  secretKeys?: readonly string[];
  destination?: pino.DestinationStream;
}): Logger {
  return pino(
    {
      name: opts.name,
      level: opts.level ?? 'info',
      redact: { paths: redactionPaths(opts.secretKeys), censor: '[redacted]' },
      base: { service: opts.name },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    opts.destination,
  );
}

/** Nest's own logs (bootstrap, routes, transport) go through the same pino instance. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}
  log(message: unknown, context?: string): void {
    this.logger.info({ context }, String(message));
  }
  error(message: unknown, trace?: string, context?: string): void {
    this.logger.error({ context, trace }, message instanceof Error ? message.message : String(message));
  }
  warn(message: unknown, context?: string): void {
    this.logger.warn({ context }, String(message));
  }
  debug(message: unknown, context?: string): void {
    this.logger.debug({ context }, String(message));
  }
  verbose(message: unknown, context?: string): void {
    this.logger.trace({ context }, String(message));
  }
  fatal(message: unknown, context?: string): void {
    this.logger.fatal({ context }, String(message));
  }
}
