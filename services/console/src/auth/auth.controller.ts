import { Controller, Get, Inject, NotFoundException, Post, Query, Req, Res } from '@nestjs/common';
import { signedOutPage } from '../views/pages';
import { HttpRequest, HttpResponse, redirect, send } from '../web/http';
import { ConsoleAuth } from './console-auth';

/** Sign in with Discord (authorization code with PKCE), the callback, and signing out. */
@Controller('auth')
export class AuthController {
  constructor(@Inject(ConsoleAuth) private readonly auth: ConsoleAuth) {}

  @Get('sign-in')
  signIn(@Req() req: HttpRequest, @Res() res: HttpResponse, @Query('return') returnTo?: string): void {
    if (!this.auth.signInEnabled) throw new NotFoundException();
    const { location, cookie } = this.auth.begin(typeof returnTo === 'string' ? returnTo : '/cases');
    redirect(req, res, 302, location, { 'Set-Cookie': cookie });
  }

  @Get('callback')
  async callback(
    @Req() req: HttpRequest,
    @Res() res: HttpResponse,
    @Query() query: Record<string, unknown>,
  ): Promise<void> {
    if (!this.auth.signInEnabled) throw new NotFoundException();
    const str = (k: string) => (typeof query[k] === 'string' ? (query[k] as string) : undefined);
    const done = await this.auth.complete(req, {
      ...(str('code') !== undefined ? { code: str('code') } : {}),
      ...(str('state') !== undefined ? { state: str('state') } : {}),
      ...(str('error') !== undefined ? { error: str('error') } : {}),
    });
    redirect(req, res, 302, done.returnTo, { 'Set-Cookie': done.cookies });
  }

  @Post('sign-out')
  signOut(@Req() req: HttpRequest, @Res() res: HttpResponse): void {
    send(req, res, 200, 'text/html; charset=utf-8', signedOutPage().value, {
      'Set-Cookie': this.auth.signOutCookie(),
    });
  }
}
