import { Controller, Get, Inject, Param, Query, Req, Res, UseGuards } from '@nestjs/common';
import type { Viewer } from '../auth/console-auth';
import { HttpRequest, HttpResponse, redirect, reply, send } from '../web/http';
import { ViewerGuard } from '../web/viewer.guard';
import { CASE_PAGE_CSS } from './case-page.css';
import { casePage, casesPage, errorPage, opsFindingsPage, waitingPage } from '../views/pages';
import { CasePageService } from './case-page.service';
import { parseStatusFilter } from './case-page.view';
import { CONSOLE_SETTINGS, ConsoleSettings } from '../console.config';

const CASE_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

/** The stylesheet: no case data, so no sign-in. */
@Controller()
export class StylesController {
  @Get('case-page.css')
  css(@Req() req: HttpRequest, @Res() res: HttpResponse): void {
    send(req, res, 200, 'text/css; charset=utf-8', CASE_PAGE_CSS, { 'Cache-Control': 'max-age=300' });
  }
}

/** The read-only pages; each answers as HTML, or as JSON with `Accept: application/json` or `.json`. */
@Controller()
@UseGuards(ViewerGuard)
export class CasesController {
  constructor(
    @Inject(CasePageService) private readonly pages: CasePageService,
    @Inject(CONSOLE_SETTINGS) private readonly settings: ConsoleSettings,
  ) {}

  @Get()
  root(@Req() req: HttpRequest, @Res() res: HttpResponse): void {
    redirect(req, res, 302, '/cases');
  }

  @Get(['cases', 'cases.json'])
  async cases(
    @Req() req: HttpRequest,
    @Res() res: HttpResponse,
    @Query('status') status?: string,
  ): Promise<void> {
    const filter = parseStatusFilter(typeof status === 'string' ? status : null);
    if (filter === 'invalid')
      return reply(req, res, 400, { error: 'unknown status' }, () =>
        errorPage(400, 'Unknown status filter.'),
      );
    const view = await this.pages.cases(filter, now());
    reply(req, res, 200, view, () =>
      casesPage(view, { refreshSeconds: this.settings.refreshSeconds, ...viewerOf(req) }),
    );
  }

  @Get(['waiting', 'waiting.json'])
  async waiting(@Req() req: HttpRequest, @Res() res: HttpResponse): Promise<void> {
    const view = await this.pages.waiting(now());
    reply(req, res, 200, view, () => waitingPage(view, viewerOf(req)));
  }

  @Get(['findings', 'findings.json'])
  async findings(@Req() req: HttpRequest, @Res() res: HttpResponse): Promise<void> {
    const view = await this.pages.opsFindings(now());
    reply(req, res, 200, view, () => opsFindingsPage(view, viewerOf(req)));
  }

  @Get('cases/:caseId')
  async case(@Req() req: HttpRequest, @Res() res: HttpResponse, @Param('caseId') raw: string): Promise<void> {
    const caseId = raw.replace(/\.json$/, '');
    const view = CASE_ID.test(caseId) ? await this.pages.case(caseId, now()) : null;
    if (!view)
      return reply(req, res, 404, { error: 'no such case' }, () =>
        errorPage(404, 'No such case in the projection.'),
      );
    reply(req, res, 200, view, () =>
      casePage(view, { refreshSeconds: this.settings.refreshSeconds, ...viewerOf(req) }),
    );
  }
}

const now = (): string => new Date().toISOString();

/** The signed-in person the guard found, for the header's sign-out form. */
const viewerOf = (req: HttpRequest): { signedInAs?: string } => {
  const viewer = (req as HttpRequest & { viewer?: Viewer }).viewer;
  return viewer?.kind === 'member' ? { signedInAs: viewer.name } : {};
};
