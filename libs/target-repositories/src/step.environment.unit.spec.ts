import { hostNetworkEnvironment, redactValues, stepDirectory, stepEnvironment } from './step.environment';

describe('step environment', () => {
  const host = {
    PATH: '/opt/node/bin:/usr/bin',
    LANG: 'C.UTF-8',
    HOME: '/root',
    NODE_EXTRA_CA_CERTS: '/etc/ssl/certs/ca-certificates.crt',
    SSL_CERT_FILE: '/etc/ssl/certs/ca-certificates.crt',
    HTTPS_PROXY: 'http://proxy.internal:3128',
    HTTP_PROXY: 'http://alice:hunter22@proxy.internal:3128',
    npm_config_registry: 'https://npm.internal/',
    NATS_PASSWORD: 'never',
    WORKER_S3_SECRET_ACCESS_KEY: 'never either',
  };

  it("passes the host's CA, proxy and registry settings, never a URL with credentials or anything else", () => {
    expect(hostNetworkEnvironment(host)).toEqual({
      NODE_EXTRA_CA_CERTS: '/etc/ssl/certs/ca-certificates.crt',
      SSL_CERT_FILE: '/etc/ssl/certs/ca-certificates.crt',
      HTTPS_PROXY: 'http://proxy.internal:3128',
      npm_config_registry: 'https://npm.internal/',
    });
  });

  it("passes the host's pip, uv and Go index settings, never one with credentials among its URLs", () => {
    expect(
      hostNetworkEnvironment({
        PIP_INDEX_URL: 'https://pypi.internal/simple',
        PIP_EXTRA_INDEX_URL: 'file:///opt/pypi/simple https://bob:s3cret@pypi.other/simple',
        PIP_FIND_LINKS: '/opt/wheels',
        GOPROXY: 'https://goproxy.internal,direct',
        UV_INDEX_URL: 'https://uv:tok@pypi.internal/simple',
      }),
    ).toEqual({
      PIP_INDEX_URL: 'https://pypi.internal/simple',
      PIP_FIND_LINKS: '/opt/wheels',
      GOPROXY: 'https://goproxy.internal,direct',
    });
  });

  it('builds a step environment: host basics, network, cache, repository env, step env, secrets, own HOME', () => {
    const env = stepEnvironment({
      inherited: host,
      home: '/runs/1/home',
      tmp: '/runs/1/tmp',
      cacheDir: '/cache',
      repo: { env: { NODE_OPTIONS: '--max-old-space-size=2048', MODE: 'repo' } },
      step: { env: { MODE: 'step' } },
      secrets: { NPM_TOKEN: 'tok-123456' },
    });
    expect(env).toMatchObject({
      PATH: '/opt/node/bin:/usr/bin',
      LANG: 'C.UTF-8',
      NODE_EXTRA_CA_CERTS: '/etc/ssl/certs/ca-certificates.crt',
      npm_config_cache: '/cache/npm',
      COREPACK_HOME: '/cache/corepack',
      NODE_OPTIONS: '--max-old-space-size=2048',
      MODE: 'step',
      CI: 'true',
      NPM_TOKEN: 'tok-123456',
      HOME: '/runs/1/home',
      TMPDIR: '/runs/1/tmp',
      GIT_TERMINAL_PROMPT: '0',
    });
    expect(env).not.toHaveProperty('NATS_PASSWORD');
    expect(env).not.toHaveProperty('WORKER_S3_SECRET_ACCESS_KEY');
    expect(env).not.toHaveProperty('HTTP_PROXY');
  });

  it('has no cache variables without a cache directory, and a default PATH', () => {
    const env = stepEnvironment({ inherited: {}, home: '/h', tmp: '/t', repo: {}, step: {}, secrets: {} });
    expect(env).not.toHaveProperty('npm_config_cache');
    expect(env.PATH).toBe('/usr/local/bin:/usr/bin:/bin');
  });

  it('keeps a step inside the worktree and redacts known values', () => {
    expect(stepDirectory('/w', 'packages/app')).toBe('/w/packages/app');
    expect(() => stepDirectory('/w', '../elsewhere')).toThrow('outside the worktree');
    expect(redactValues('token tok-123456 used', ['tok-123456', 'ab'])).toBe(
      'token [redacted:known_secret] used',
    );
  });
});
