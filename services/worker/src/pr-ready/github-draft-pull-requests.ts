import { TargetRepository } from '@caseloop/target-repositories';
import { DraftPullRequests } from './draft-pull-requests';

export class GitHubError extends Error {
  constructor(
    readonly status: number,
    readonly operation: string,
  ) {
    super(`GitHub ${operation} answered ${status}`);
    this.name = 'GitHubError';
  }
}

/** `owner/name` of a repository URL on `webHost`, or null when it is hosted elsewhere. */
export function githubSlug(url: string, webHost: string): { owner: string; name: string } | null {
  const host = webHost.replace(/[.]/g, '\\.');
  const m =
    new RegExp(
      `^(?:https?|ssh)://(?:[^@/]+@)?${host}(?::\\d+)?/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(?:\\.git)?/?$`,
      'i',
    ).exec(url) ??
    new RegExp(`^[A-Za-z0-9._-]+@${host}:([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(?:\\.git)?$`, 'i').exec(url);
  return m ? { owner: m[1] as string, name: m[2] as string } : null;
}

/**
 * Draft pull requests through GitHub's REST API (github.com or GitHub Enterprise). Plain `fetch`:
 * three calls (list, create, update) do not need a client library, and the ESM-only Octokit cannot
 * be loaded by this CommonJS build's test runner. There is deliberately no merge and no review call.
 */
export class GitHubDraftPullRequests implements DraftPullRequests {
  private readonly api: string;
  private readonly webHost: string;

  constructor(private readonly opts: { apiUrl: string; token: string; fetch?: typeof fetch }) {
    this.api = opts.apiUrl.replace(/\/+$/, '');
    const host = new URL(this.api).host;
    this.webHost = host === 'api.github.com' ? 'github.com' : host;
  }

  async openOrUpdate(
    repo: TargetRepository,
    pr: { branch: string; title: string; body: string },
  ): Promise<string | null> {
    const slug = githubSlug(repo.url, this.webHost);
    if (!slug) return null;
    const base = `${this.api}/repos/${encodeURIComponent(slug.owner)}/${encodeURIComponent(slug.name)}/pulls`;
    const open = await this.call<{ number: number; html_url: string }[]>(
      'list pulls',
      'GET',
      `${base}?state=open&per_page=1&head=${encodeURIComponent(`${slug.owner}:${pr.branch}`)}`,
    );
    const existing = open[0];
    if (existing) {
      const updated = await this.call<{ html_url: string }>(
        'update pull',
        'PATCH',
        `${base}/${existing.number}`,
        { title: pr.title, body: pr.body },
      );
      return updated.html_url;
    }
    const created = await this.call<{ html_url: string }>('create pull', 'POST', base, {
      title: pr.title,
      body: pr.body,
      head: pr.branch,
      base: repo.targetBranch,
      draft: true,
      maintainer_can_modify: false,
    });
    return created.html_url;
  }

  private async call<T>(operation: string, method: string, url: string, body?: unknown): Promise<T> {
    const res = await (this.opts.fetch ?? fetch)(url, {
      method,
      headers: {
        Accept: 'application/vnd.github+json',
        Authorization: `Bearer ${this.opts.token}`,
        'X-GitHub-Api-Version': '2022-11-28',
        'User-Agent': 'caseloop-worker',
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(30_000),
    });
    if (!res.ok) throw new GitHubError(res.status, operation);
    return (await res.json()) as T;
  }
}
