import { parseRepositories, RepositoryConfigError } from './repositories.loader';

const valid = {
  repositories: [
    {
      id: 'webapp',
      url: 'https://git.example.com/acme/webapp.git',
      targetBranch: 'main',
      credentialsFile: 'secrets/webapp.token',
      checks: [
        { name: 'lint', kind: 'lint', command: ['npm', 'run', 'lint'], timeoutMs: 60_000 },
        { name: 'focused', kind: 'focused_test', command: ['npx', 'jest', 'src/cart'], timeoutMs: 120_000 },
      ],
      client: {
        start: ['npm', 'run', 'preview'],
        url: 'http://127.0.0.1:4173',
        readyPath: '/',
        flow: 'flows/cart.yaml',
        fixtureData: false,
      },
    },
  ],
};

const problemsOf = (raw: unknown): string[] => {
  try {
    parseRepositories(raw, 'repos.yaml', '/etc/caseloop');
  } catch (e) {
    if (e instanceof RepositoryConfigError) return e.problems;
    throw e;
  }
  throw new Error('expected a RepositoryConfigError');
};

const withRepo = (patch: Record<string, unknown>) => ({
  repositories: [{ ...valid.repositories[0], ...patch }],
});

describe('target repository configuration', () => {
  it('accepts a complete repository and resolves relative paths against the file', () => {
    const parsed = parseRepositories(valid, 'repos.yaml', '/etc/caseloop');
    expect(parsed.repositories[0]).toMatchObject({
      id: 'webapp',
      credentialsFile: '/etc/caseloop/secrets/webapp.token',
      client: { flow: '/etc/caseloop/flows/cart.yaml' },
    });
  });

  it.each([
    ['an id with a path', { id: '../etc' }, 'repositories[0].id'],
    ['an id with a space', { id: 'web app' }, 'repositories[0].id'],
    ['a branch with ..', { targetBranch: 'main/../x' }, 'repositories[0].targetBranch'],
    ['a branch with shell metacharacters', { targetBranch: 'main;rm' }, 'repositories[0].targetBranch'],
    ['a URL that git would read as an option', { url: '--upload-pack=touch' }, 'repositories[0].url'],
    [
      'a URL with embedded credentials',
      { url: 'https://bob:hunter2@git.example.com/x.git' },
      'repositories[0].url',
    ],
    ['a relative local path', { url: 'repos/x' }, 'repositories[0].url'],
    [
      'a shell string instead of an argv',
      { checks: [{ name: 'lint', kind: 'lint', command: 'npm run lint', timeoutMs: 1000 }] },
      'repositories[0].checks[0].command',
    ],
    [
      'an unknown check kind',
      { checks: [{ name: 'x', kind: 'vibes', command: ['true'], timeoutMs: 1000 }] },
      'repositories[0].checks[0].kind',
    ],
    ['no checks', { checks: [] }, 'repositories[0].checks'],
    ['an unknown key', { colour: 'blue' }, 'repositories[0]'],
    ['a secret-looking name in env', { env: { NPM_TOKEN: 'x' } }, 'repositories[0].env.NPM_TOKEN'],
    ['a variable caseloop sets itself', { env: { HOME: '/root' } }, 'repositories[0].env.HOME'],
    [
      'a check directory outside the repository',
      { checks: [{ name: 'x', kind: 'lint', command: ['true'], timeoutMs: 1000, cwd: '../other' }] },
      'repositories[0].checks[0].cwd',
    ],
    [
      'an absolute setup directory',
      { setup: [{ name: 'install', command: ['npm', 'ci'], timeoutMs: 1000, cwd: '/etc' }] },
      'repositories[0].setup[0].cwd',
    ],
    [
      'a secret named like one of caseloop’s own',
      { secretFiles: { NATS_PASSWORD: 'x' } },
      'repositories[0].secretFiles.NATS_PASSWORD',
    ],
  ])('refuses %s and names the key', (_what, patch, key) => {
    const problems = problemsOf(withRepo(patch));
    expect(problems.some((p) => p.startsWith(`${key}:`))).toBe(true);
  });

  it('accepts setup steps, per-check env and directories, secret files and an explicit client port', () => {
    const parsed = parseRepositories(
      withRepo({
        setup: [
          {
            name: 'install',
            command: ['corepack', 'pnpm', 'install', '--frozen-lockfile'],
            timeoutMs: 600_000,
            inputs: ['package.json', 'pnpm-lock.yaml'],
          },
        ],
        env: { NODE_OPTIONS: '--max-old-space-size=2048' },
        secretFiles: { NPM_TOKEN: 'secrets/npm-token' },
        checks: [
          {
            name: 'web',
            kind: 'lint',
            command: ['pnpm', 'lint'],
            timeoutMs: 1000,
            cwd: 'packages/web',
            env: { TZ: 'UTC' },
          },
        ],
        client: {
          ...valid.repositories[0]!.client,
          port: 4173,
          cwd: 'packages/web',
          env: { VITE_MODE: 'e2e' },
        },
      }),
      'repos.yaml',
      '/etc/caseloop',
    );
    expect(parsed.repositories[0]).toMatchObject({
      secretFiles: { NPM_TOKEN: '/etc/caseloop/secrets/npm-token' },
      client: { port: 4173, cwd: 'packages/web' },
      checks: [{ cwd: 'packages/web', env: { TZ: 'UTC' } }],
    });
  });

  it('never echoes a value it refuses', () => {
    const problems = problemsOf(withRepo({ url: 'https://bob:hunter2@git.example.com/x.git' }));
    expect(problems.join(' ')).not.toContain('hunter2');
  });

  it('refuses duplicate repository ids and duplicate check names', () => {
    const repo = valid.repositories[0]!;
    expect(problemsOf({ repositories: [repo, repo] })).toContain(
      'repositories[1].id: duplicate repository id',
    );
    const check = repo.checks[0]!;
    expect(problemsOf(withRepo({ checks: [check, check] }))).toContain(
      'repositories[0].checks[1].name: duplicate check name',
    );
  });
});
