import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Inject } from '@nestjs/common';
import { PINO_LOGGER } from '@caseloop/platform';
import type { Logger } from 'pino';
import { ConsoleAuth } from '../auth/console-auth';
import { SignInError } from '../auth/discord-oauth.client';
import { errorPage } from '../views/pages';
import { HttpRequest, HttpResponse, redirect, reply, send, wantsJson } from './http';
import { ConsoleDenied } from './viewer.guard';

/** Each way a console request fails, mapped once to its HTTP answer. */
@Catch()
export class ConsoleExceptionFilter implements ExceptionFilter {
  constructor(
    @Inject(ConsoleAuth) private readonly auth: ConsoleAuth,
    @Inject(PINO_LOGGER) private readonly log: Logger,
  ) {}

  catch(error: unknown, host: ArgumentsHost): void {
    const req = host.switchToHttp().getRequest<HttpRequest>();
    const res = host.switchToHttp().getResponse<HttpResponse>();
    if (res.headersSent) {
      res.end();
      return;
    }
    const page = (status: number, message: string, view: unknown = { error: message }) =>
      reply(req, res, status, view, () => errorPage(status, message));
    if (error instanceof ConsoleDenied) {
      switch (error.code) {
        case 'not_admitted':
          return page(
            403,
            'You are signed in, but this console is open only to the reviewers and roles its binding names.',
            {
              error: 'not admitted',
            },
          );
        case 'bad_token':
          return send(req, res, 401, 'text/plain; charset=utf-8', 'authentication required\n', {
            'WWW-Authenticate': 'Basic realm="caseloop console", charset="UTF-8"',
          });
        case 'sign_in_required':
          if (!this.auth.signInEnabled)
            return send(req, res, 401, 'text/plain; charset=utf-8', 'authentication required\n', {
              'WWW-Authenticate': 'Basic realm="caseloop console", charset="UTF-8"',
            });
          if (wantsJson(req))
            return send(req, res, 401, 'application/json; charset=utf-8', '{"error":"sign in required"}\n');
          return redirect(req, res, 302, `/auth/sign-in?return=${encodeURIComponent(req.originalUrl)}`);
      }
    }
    if (error instanceof SignInError) {
      this.log.info({ code: error.code }, 'console sign-in failed');
      return page(error.code === 'discord_unreachable' ? 502 : 400, `Sign-in failed: ${error.message}.`, {
        error: error.code,
      });
    }
    if (error instanceof HttpException) {
      const status = error.getStatus();
      return page(status, status === 404 ? 'Not found.' : error.message, {
        error: status === 404 ? 'not found' : error.message,
      });
    }
    this.log.warn({ err: (error as Error).message, path: req.path }, 'console page failed');
    page(503, 'The case projection is not reachable right now.', { error: 'projection unreachable' });
  }
}
