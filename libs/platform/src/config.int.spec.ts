import { chmodSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { defineConfig, parseConfig } from './config';

const def = defineConfig({
  schema: z.object({ NATS_PASSWORD: z.string().min(1) }),
  secrets: ['NATS_PASSWORD'],
});
const value = 's3cr3t-value-never-shown';

describe('secrets from files', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'caseloop-config-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const file = (name: string, mode: number, content = `${value}\n`) => {
    const p = join(dir, name);
    writeFileSync(p, content);
    chmodSync(p, mode);
    return p;
  };

  it('reads an owner-only regular file, without its trailing newline', () => {
    expect(parseConfig(def, { NATS_PASSWORD_FILE: file('ok', 0o600) }).NATS_PASSWORD).toBe(value);
    expect(parseConfig(def, { NATS_PASSWORD_FILE: file('ro', 0o400) }).NATS_PASSWORD).toBe(value);
  });

  it.each([
    ['group-readable', () => file('wide', 0o640), /must be readable by its owner only/],
    ['world-readable', () => file('world', 0o644), /mode is 644/],
    [
      'a symlink',
      () => {
        const target = file('target', 0o600);
        const link = join(dir, 'link');
        symlinkSync(target, link);
        return link;
      },
      /not a symlink/,
    ],
    ['a directory', () => dir, /regular file/],
    ['missing', () => join(dir, 'absent'), /missing/],
    ['empty', () => file('empty', 0o600, ''), /empty/],
  ])('refuses a file that is %s, naming the key and not the value', (_what, make, problem) => {
    let message = '';
    try {
      parseConfig(def, { NATS_PASSWORD_FILE: make() });
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toMatch(/NATS_PASSWORD_FILE: /);
    expect(message).toMatch(problem);
    expect(message).not.toContain(value);
  });
});
