import { Controller, Get, Inject, Res } from '@nestjs/common';
import { Registry } from 'prom-client';
import { HealthReport, ServiceHealth } from './service-health';

interface HttpReply {
  status(code: number): unknown;
  setHeader(name: string, value: string): unknown;
}

@Controller()
export class HealthController {
  constructor(
    @Inject(ServiceHealth) private readonly health: ServiceHealth,
    @Inject(Registry) private readonly registry: Registry,
  ) {}

  /** 200 when ready, 503 otherwise; the body says which part is not. */
  @Get('healthz')
  healthz(@Res({ passthrough: true }) res: HttpReply): HealthReport {
    const report = this.health.report();
    res.status(report.status === 'ready' ? 200 : 503);
    return report;
  }

  @Get('metrics')
  async metrics(@Res({ passthrough: true }) res: HttpReply): Promise<string> {
    res.setHeader('Content-Type', this.registry.contentType);
    return this.registry.metrics();
  }
}
