import { Inject, Injectable, NestMiddleware } from '@nestjs/common';
import { isLoopback } from '../console.config';
import { ConsoleAuth } from '../auth/console-auth';
import { HttpRequest, HttpResponse, send } from './http';

/** The only non-GET route: signing out is a form post (no script on any page). */
const POSTS = new Set(['/auth/sign-out']);

/**
 * Before any route: the console is read-only (GET and HEAD, plus the sign-out form), and when it
 * runs open on loopback it answers only requests addressed to a loopback name, so a web page a
 * viewer visits cannot rebind its own host name to 127.0.0.1 and read cases through their browser.
 */
@Injectable()
export class ConsoleMiddleware implements NestMiddleware {
  constructor(@Inject(ConsoleAuth) private readonly auth: ConsoleAuth) {}

  use(req: HttpRequest, res: HttpResponse, next: () => void): void {
    // Mounted for every route, the middleware sees `req.path` relative to its mount: read the URL itself.
    const path = (req.originalUrl.split('?')[0] ?? '/').replace(/\/+$/, '') || '/';
    if (req.method !== 'GET' && req.method !== 'HEAD' && !(req.method === 'POST' && POSTS.has(path))) {
      send(req, res, 405, 'text/plain; charset=utf-8', 'read-only\n', { Allow: 'GET, HEAD' });
      return;
    }
    if (this.auth.openOnLoopback && !addressedToLoopback(req)) {
      send(req, res, 421, 'text/plain; charset=utf-8', 'misdirected request\n');
      return;
    }
    next();
  }
}

function addressedToLoopback(req: HttpRequest): boolean {
  const raw = req.headers.host;
  const host = String(Array.isArray(raw) ? raw[0] : (raw ?? ''))
    .replace(/:\d+$/, '')
    .replace(/^\[(.*)\]$/, '$1')
    .toLowerCase();
  return isLoopback(host);
}
