import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { ConsoleAuth, Viewer } from '../auth/console-auth';
import type { HttpRequest, HttpResponse } from './http';

export type DeniedCode = 'sign_in_required' | 'bad_token' | 'not_admitted';

/** A request the console will not answer; the exception filter turns each code into its response. */
export class ConsoleDenied extends Error {
  constructor(readonly code: DeniedCode) {
    super(code);
    this.name = 'ConsoleDenied';
  }
}

/**
 * Lets in the open loopback console, a valid API token, and signed-in members whose membership
 * Discord confirmed within the re-check interval; nobody else. A renewed or ended session's cookie
 * goes out with whatever the request gets, a refusal included.
 */
@Injectable()
export class ViewerGuard implements CanActivate {
  constructor(@Inject(ConsoleAuth) private readonly auth: ConsoleAuth) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    const req = ctx.switchToHttp().getRequest<HttpRequest & { viewer?: Viewer }>();
    const { viewer, cookies } = await this.auth.authenticate(req);
    if (cookies.length > 0) ctx.switchToHttp().getResponse<HttpResponse>().setHeader('Set-Cookie', cookies);
    req.viewer = viewer;
    switch (viewer.kind) {
      case 'open':
      case 'token':
      case 'member':
        return true;
      case 'stranger':
        throw new ConsoleDenied('not_admitted');
      case 'anonymous':
        throw new ConsoleDenied(viewer.badToken ? 'bad_token' : 'sign_in_required');
    }
  }
}
