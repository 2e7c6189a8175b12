/** The parts of Express's request and response the console uses (its types are not a dependency). */
export interface HttpRequest {
  method: string;
  path: string;
  originalUrl: string;
  headers: Record<string, string | string[] | undefined>;
  query: Record<string, unknown>;
}

export interface HttpResponse {
  statusCode: number;
  headersSent: boolean;
  setHeader(name: string, value: string | string[]): unknown;
  end(body?: string): unknown;
}

/**
 * Every response forbids scripts outright: even if a report's text slipped past escaping it could
 * not run. Images may come from anywhere over http(s) because the evidence service answers with a
 * redirect to the S3 endpoint, whose origin the console does not know.
 */
export const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy':
    "default-src 'none'; style-src 'self'; img-src 'self' http: https:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cache-Control': 'no-store',
};

export function send(
  req: HttpRequest,
  res: HttpResponse,
  status: number,
  type: string,
  body: string,
  extra: Record<string, string | string[]> = {},
): void {
  res.statusCode = status;
  for (const [k, v] of Object.entries({ ...SECURITY_HEADERS, 'Content-Type': type, ...extra }))
    res.setHeader(k, v);
  res.setHeader('Content-Length', String(Buffer.byteLength(body)));
  res.end(req.method === 'HEAD' ? undefined : body);
}

export function redirect(
  req: HttpRequest,
  res: HttpResponse,
  status: 302 | 303,
  location: string,
  extra: Record<string, string | string[]> = {},
): void {
  send(req, res, status, 'text/plain; charset=utf-8', '', { Location: location, ...extra });
}

export const wantsJson = (req: HttpRequest): boolean =>
  String(req.headers.accept ?? '')
    .split(',')[0]
    ?.trim()
    .startsWith('application/json') === true || req.path.endsWith('.json');

/** One answer in the form the viewer asked for: the view as JSON, or the page rendered from it. */
export function reply(
  req: HttpRequest,
  res: HttpResponse,
  status: number,
  view: unknown,
  page: () => { value: string },
): void {
  if (wantsJson(req)) send(req, res, status, 'application/json; charset=utf-8', `${JSON.stringify(view)}\n`);
  else send(req, res, status, 'text/html; charset=utf-8', page().value);
}
