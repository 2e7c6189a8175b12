import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { timingSafeEqual, createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { CASE_PAGE_CSS } from './case-page.css';
import { casePage, casesPage, errorPage, opsFindingsPage, waitingPage } from './case-page.html';
import { CasePageService } from './case-page.service';
import { CasePageSettings, isLoopback } from './case-page.config';
import { parseStatusFilter } from './case-page.view';
import { Html } from './html';

/**
 * Every response forbids scripts outright: even if a report's text slipped past escaping it could
 * not run. Images may come from anywhere over http(s) because the evidence service answers with a
 * redirect to the S3 endpoint, whose origin the monitor does not know.
 */
const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy':
    "default-src 'none'; style-src 'self'; img-src 'self' http: https:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cache-Control': 'no-store',
};

const CASE_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

/**
 * The case page's own HTTP listener: read-only, GET and HEAD only, loopback by default, guarded by
 * a shared secret when one is configured (HTTP Basic password or Bearer token).
 */
export class CasePageServer {
  private server: Server | null = null;
  private readonly secretDigest: Buffer | null;

  constructor(
    private readonly settings: CasePageSettings,
    private readonly pages: CasePageService,
    private readonly log: Logger,
    private readonly clock: () => Date = () => new Date(),
  ) {
    this.secretDigest = settings.secret === null ? null : digest(settings.secret);
  }

  async start(): Promise<string> {
    const server = createServer((req, res) => {
      this.handle(req, res).catch((e: unknown) => {
        this.log.warn({ err: (e as Error).message, path: pathOf(req) }, 'case page failed');
        if (!res.headersSent)
          this.send(
            res,
            503,
            'text/html; charset=utf-8',
            errorPage(503, 'The case projection is not reachable right now.').value,
          );
        else res.end();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.settings.port, this.settings.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    const url = this.url();
    this.log.info(
      { url, auth: this.settings.secret ? 'shared_secret' : this.settings.authProxy ? 'proxy' : 'loopback' },
      'case page listening',
    );
    return url;
  }

  url(): string {
    const addr = this.server?.address() as AddressInfo | null;
    const host = this.settings.host.includes(':') ? `[${this.settings.host}]` : this.settings.host;
    return `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${addr?.port ?? this.settings.port}`;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /**
   * Unguarded (loopback, no secret, no proxy), the page answers only requests addressed to a
   * loopback name: a web page a viewer visits cannot rebind its own host name to 127.0.0.1 and
   * read cases through the viewer's browser.
   */
  private addressedToUs(req: IncomingMessage): boolean {
    if (this.secretDigest !== null || this.settings.authProxy) return true;
    const host = (req.headers.host ?? '')
      .replace(/:\d+$/, '')
      .replace(/^\[(.*)\]$/, '$1')
      .toLowerCase();
    return isLoopback(host) || host === this.settings.host.toLowerCase();
  }

  private authorized(req: IncomingMessage): boolean {
    if (this.secretDigest === null) return true;
    const header = req.headers.authorization ?? '';
    let given: string | null = null;
    if (header.startsWith('Bearer ')) given = header.slice(7);
    else if (header.startsWith('Basic ')) {
      const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
      given = decoded.slice(decoded.indexOf(':') + 1);
    }
    return given !== null && timingSafeEqual(digest(given), this.secretDigest);
  }

  private send(
    res: ServerResponse,
    status: number,
    type: string,
    body: string,
    extra: Record<string, string> = {},
  ): void {
    res.writeHead(status, {
      ...SECURITY_HEADERS,
      'Content-Type': type,
      'Content-Length': Buffer.byteLength(body),
      ...extra,
    });
    res.end(res.req.method === 'HEAD' ? undefined : body);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      this.send(res, 405, 'text/plain; charset=utf-8', 'read-only\n', { Allow: 'GET, HEAD' });
      return;
    }
    if (!this.addressedToUs(req)) {
      this.send(res, 421, 'text/plain; charset=utf-8', 'misdirected request\n');
      return;
    }
    if (!this.authorized(req)) {
      this.send(res, 401, 'text/plain; charset=utf-8', 'authentication required\n', {
        'WWW-Authenticate': 'Basic realm="caseloop cases", charset="UTF-8"',
      });
      return;
    }
    const url = new URL(req.url ?? '/', 'http://case-page.local');
    const wantsJson =
      (req.headers.accept ?? '').split(',')[0]?.trim().startsWith('application/json') === true ||
      url.pathname.endsWith('.json');
    const path = url.pathname.replace(/\.json$/, '').replace(/\/+$/, '') || '/';
    const now = this.clock().toISOString();
    const reply = (status: number, view: unknown, page: () => Html) =>
      wantsJson
        ? this.send(res, status, 'application/json; charset=utf-8', `${JSON.stringify(view)}\n`)
        : this.send(res, status, 'text/html; charset=utf-8', page().value);

    if (path === '/case-page.css') {
      this.send(res, 200, 'text/css; charset=utf-8', CASE_PAGE_CSS, { 'Cache-Control': 'max-age=300' });
      return;
    }
    if (path === '/') {
      res.writeHead(302, { ...SECURITY_HEADERS, Location: '/cases' });
      res.end();
      return;
    }
    if (path === '/cases') {
      const filter = parseStatusFilter(url.searchParams.get('status'));
      if (filter === 'invalid') {
        reply(400, { error: 'unknown status' }, () => errorPage(400, 'Unknown status filter.'));
        return;
      }
      const view = await this.pages.cases(filter, now);
      reply(200, view, () => casesPage(view, { refreshSeconds: this.settings.refreshSeconds }));
      return;
    }
    if (path === '/waiting') {
      const view = await this.pages.waiting(now);
      reply(200, view, () => waitingPage(view));
      return;
    }
    if (path === '/findings') {
      const view = await this.pages.opsFindings(now);
      reply(200, view, () => opsFindingsPage(view));
      return;
    }
    const m = /^\/cases\/([^/]+)$/.exec(path);
    if (m) {
      const caseId = m[1] as string;
      const view = CASE_ID.test(caseId) ? await this.pages.case(caseId, now) : null;
      if (!view) {
        reply(404, { error: 'no such case' }, () => errorPage(404, 'No such case in the projection.'));
        return;
      }
      reply(200, view, () => casePage(view, { refreshSeconds: this.settings.refreshSeconds }));
      return;
    }
    reply(404, { error: 'not found' }, () => errorPage(404, 'Not found.'));
  }
}

function pathOf(req: IncomingMessage): string {
  return (req.url ?? '/').split('?')[0] ?? '/';
}
