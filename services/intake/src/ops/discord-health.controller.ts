import { Controller, Get, Inject, Res } from '@nestjs/common';
import { IntakeRuntime } from '../intake/intake.runtime';

interface HttpReply {
  status(code: number): unknown;
}

/** The gateway's side of readiness (NATS and the consumer are on `/healthz`). */
@Controller()
export class DiscordHealthController {
  constructor(@Inject(IntakeRuntime) private readonly intake: IntakeRuntime) {}

  @Get('healthz/discord')
  discord(@Res({ passthrough: true }) res: HttpReply): { gateway: string; botId: string } {
    const gateway = this.intake.gatewayState;
    res.status(gateway === 'ready' ? 200 : 503);
    return { gateway, botId: this.intake.selfId };
  }
}
