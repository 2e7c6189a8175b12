import { createServer, IncomingMessage, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { TargetRepository } from '@caseloop/target-repositories';
import { GitHubDraftPullRequests, githubSlug } from './github-draft-pull-requests';

interface Seen {
  method: string;
  path: string;
  auth: string | undefined;
  body: Record<string, unknown> | null;
}

/** A local stand-in for the GitHub pulls API: one repository, pull requests kept in memory. */
function fakeGitHub(): {
  server: Server;
  seen: Seen[];
  pulls: { number: number; head: string; title: string; draft: boolean }[];
} {
  const seen: Seen[] = [];
  const pulls: { number: number; head: string; title: string; draft: boolean }[] = [];
  const read = (req: IncomingMessage) =>
    new Promise<string>((resolve) => {
      let data = '';
      req.on('data', (c) => (data += c));
      req.on('end', () => resolve(data));
    });
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://local');
    const raw = await read(req);
    const body = raw ? (JSON.parse(raw) as Record<string, unknown>) : null;
    seen.push({ method: req.method ?? '', path: url.pathname, auth: req.headers.authorization, body });
    const json = (status: number, v: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(v));
    };
    if (req.headers.authorization !== 'Bearer gh-test-token')
      return json(401, { message: 'Bad credentials' });
    const html = (n: number) => `https://github.com/acme/shop/pull/${n}`;
    if (req.method === 'GET' && url.pathname === '/repos/acme/shop/pulls') {
      const head = url.searchParams.get('head');
      return json(
        200,
        pulls
          .filter((p) => `acme:${p.head}` === head)
          .map((p) => ({ number: p.number, html_url: html(p.number) })),
      );
    }
    if (req.method === 'POST' && url.pathname === '/repos/acme/shop/pulls') {
      const pr = {
        number: pulls.length + 1,
        head: String(body?.head),
        title: String(body?.title),
        draft: body?.draft === true,
      };
      pulls.push(pr);
      return json(201, { number: pr.number, html_url: html(pr.number) });
    }
    const m = /^\/repos\/acme\/shop\/pulls\/(\d+)$/.exec(url.pathname);
    if (req.method === 'PATCH' && m) {
      const pr = pulls.find((p) => p.number === Number(m[1]));
      if (!pr) return json(404, {});
      pr.title = String(body?.title);
      return json(200, { number: pr.number, html_url: html(pr.number) });
    }
    return json(404, { message: 'Not Found' });
  });
  return { server, seen, pulls };
}

describe('draft pull requests on GitHub', () => {
  const gh = fakeGitHub();
  let api: string;
  const repo: TargetRepository = {
    id: 'shop',
    url: 'https://github.com/acme/shop.git',
    targetBranch: 'main',
    checks: [{ name: 'x', kind: 'other', command: ['true'], timeoutMs: 1000 }],
  };

  beforeAll(async () => {
    await new Promise<void>((r) => gh.server.listen(0, '127.0.0.1', r));
    api = `http://127.0.0.1:${(gh.server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => gh.server.close(() => r())));

  it('opens a draft once, then updates the same pull request; never merges, never reviews', async () => {
    // The adapter maps api.github.com to github.com; a local API stands in for an Enterprise host.
    const adapter = new GitHubDraftPullRequests({ apiUrl: api, token: 'gh-test-token' });
    const local = { ...repo, url: `https://${new URL(api).host}/acme/shop.git` };
    const first = await adapter.openOrUpdate(local, {
      branch: 'caseloop/C1',
      title: 'caseloop: cart (case C1)',
      body: 'b',
    });
    const second = await adapter.openOrUpdate(local, {
      branch: 'caseloop/C1',
      title: 'caseloop: cart, revised (case C1)',
      body: 'b',
    });
    expect(first).toBe('https://github.com/acme/shop/pull/1');
    expect(second).toBe(first);
    expect(gh.pulls).toEqual([
      { number: 1, head: 'caseloop/C1', title: 'caseloop: cart, revised (case C1)', draft: true },
    ]);
    expect(gh.seen.map((s) => `${s.method} ${s.path}`)).toEqual([
      'GET /repos/acme/shop/pulls',
      'POST /repos/acme/shop/pulls',
      'GET /repos/acme/shop/pulls',
      'PATCH /repos/acme/shop/pulls/1',
    ]);
    expect(gh.seen.find((s) => s.method === 'POST')?.body).toMatchObject({
      head: 'caseloop/C1',
      base: 'main',
      draft: true,
    });
    expect(gh.seen.some((s) => /merge|reviews/.test(s.path))).toBe(false);
  });

  it('reports a refused call by status, without the token', async () => {
    const adapter = new GitHubDraftPullRequests({ apiUrl: api, token: 'wrong-token-value' });
    const local = { ...repo, url: `https://${new URL(api).host}/acme/shop.git` };
    const err = await adapter
      .openOrUpdate(local, { branch: 'caseloop/C2', title: 't', body: 'b' })
      .catch((e: Error) => e);
    expect(err).toMatchObject({ name: 'GitHubError', status: 401 });
    expect(String((err as Error).message)).not.toContain('wrong-token-value');
  });

  it('leaves repositories hosted elsewhere alone', async () => {
    const adapter = new GitHubDraftPullRequests({ apiUrl: 'https://api.github.com', token: 't' });
    expect(
      await adapter.openOrUpdate(
        { ...repo, url: 'https://gitlab.example.com/acme/shop.git' },
        { branch: 'b', title: 't', body: 'b' },
      ),
    ).toBeNull();
  });

  it.each([
    ['https://github.com/acme/shop.git', { owner: 'acme', name: 'shop' }],
    ['https://github.com/acme/shop', { owner: 'acme', name: 'shop' }],
    ['git@github.com:acme/shop.git', { owner: 'acme', name: 'shop' }],
    ['ssh://git@github.com/acme/shop.git', { owner: 'acme', name: 'shop' }],
    ['https://github.com.evil.example/acme/shop.git', null],
    ['/srv/git/shop.git', null],
  ])('reads the slug of %s', (url, slug) => {
    expect(githubSlug(url, 'github.com')).toEqual(slug);
  });
});
