import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { ConsoleAuth, Viewer } from '../auth/console-auth';
import type { HttpRequest } from './http';

export type DeniedCode = 'sign_in_required' | 'bad_token' | 'not_admitted';

/** A request the console will not answer; the exception filter turns each code into its response. */
export class ConsoleDenied extends Error {
  constructor(readonly code: DeniedCode) {
    super(code);
    this.name = 'ConsoleDenied';
  }
}

/** Lets in the open loopback console, a valid API token, and signed-in members; nobody else. */
@Injectable()
export class ViewerGuard implements CanActivate {
  constructor(@Inject(ConsoleAuth) private readonly auth: ConsoleAuth) {}

  canActivate(ctx: ExecutionContext): boolean {
    const req = ctx.switchToHttp().getRequest<HttpRequest & { viewer?: Viewer }>();
    const viewer = this.auth.viewer(req);
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
