import { Counter, Gauge, Registry } from 'prom-client';
import type { DropReason } from '../intake/authorization.decider';

/** The intake service's Prometheus metrics, registered on the service's registry (never the global one). */
export class IntakeMetrics {
  readonly messagesIn: Counter<'via'>;
  readonly dropped: Counter<'reason'>;
  readonly delivered: Counter;
  readonly refused: Counter<'kind'>;
  readonly gatewayReconnects: Counter;
  readonly gatewayReady: Gauge;
  readonly commandsRegistered: Gauge<'guild'>;

  constructor(registry: Registry) {
    this.messagesIn = new Counter({
      name: 'caseloop_intake_messages_in_total',
      help: 'Discord messages intake examined (gateway and delta), before authorization.',
      labelNames: ['via'],
      registers: [registry],
    });
    this.dropped = new Counter({
      name: 'caseloop_intake_dropped_total',
      help: 'Messages recorded as SourceDropped, by reason.',
      labelNames: ['reason'],
      registers: [registry],
    });
    this.delivered = new Counter({
      name: 'caseloop_intake_delivered_total',
      help: 'Chunks the outbox posted and Discord confirmed.',
      registers: [registry],
    });
    this.refused = new Counter({
      name: 'caseloop_intake_refused_total',
      help: 'Chunks the outbox refused (kind=delivery) and reviewer commands refused (kind=command).',
      labelNames: ['kind'],
      registers: [registry],
    });
    this.gatewayReconnects = new Counter({
      name: 'caseloop_intake_gateway_reconnects_total',
      help: 'Times the gateway connection was lost and discord.js reconnected or resumed.',
      registers: [registry],
    });
    this.gatewayReady = new Gauge({
      name: 'caseloop_intake_gateway_ready',
      help: '1 while the gateway session is ready.',
      registers: [registry],
    });
    this.commandsRegistered = new Gauge({
      name: 'caseloop_intake_commands_registered',
      help: "1 once intake's slash commands are registered in the guild, 0 while they are not.",
      labelNames: ['guild'],
      registers: [registry],
    });
  }

  drop(reason: DropReason): void {
    this.dropped.inc({ reason });
  }
}

/** The subset of pino intake logs through; pino loggers satisfy it. */
export interface IntakeLog {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  debug(obj: object, msg?: string): void;
}
