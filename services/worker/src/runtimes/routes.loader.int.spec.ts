import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { loadRoutesFile } from './routes.loader';

describe('the agent routes file', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'caseloop-routes-spec-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("takes relative paths from the file's directory, as the repositories file does, not from the worker's", async () => {
    const file = join(dir, 'agent-routes.yaml');
    await writeFile(
      file,
      stringify({
        normal: {
          name: 'scripted',
          timeoutMs: 60_000,
          runtime: { kind: 'scripted', steps: [{ copy: 'fix' }, { patch: '../patches/second.diff' }, {}] },
          providerCredentialFiles: { ANTHROPIC_API_KEY: 'secrets/anthropic-api-key' },
        },
        escalation: {
          name: 'codex',
          timeoutMs: 60_000,
          runtime: { kind: 'codex', model: 'gpt-5-codex', reasoningEffort: 'high' },
          providerCredentialFiles: { OPENAI_API_KEY: '/run/secrets/openai' },
        },
      }),
    );
    const routes = loadRoutesFile(file);
    expect(routes.normal.runtime).toEqual({
      kind: 'scripted',
      steps: [
        { copy: join(dir, 'fix'), exitCode: 0 },
        { patch: join(dir, '..', 'patches', 'second.diff'), exitCode: 0 },
        { exitCode: 0 },
      ],
    });
    expect(routes.normal.providerCredentialFiles).toEqual({
      ANTHROPIC_API_KEY: join(dir, 'secrets', 'anthropic-api-key'),
    });
    expect(routes.escalation?.providerCredentialFiles).toEqual({ OPENAI_API_KEY: '/run/secrets/openai' });
    expect(routes.escalation?.runtime).toEqual({
      kind: 'codex',
      binary: 'codex',
      model: 'gpt-5-codex',
      reasoningEffort: 'high',
    });
  });
});
