import { chmodSync, mkdtempSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { readTokenFile, TokenFileError } from './token-file';

const SECRET = 'MTAx.secret-token-value.xyz';

describe('token file', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'caseloop-token-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const file = (name: string, mode: number) => {
    const p = join(dir, name);
    writeFileSync(p, `${SECRET}\n`);
    chmodSync(p, mode);
    return p;
  };

  const code = async (p: string) => {
    try {
      await readTokenFile(p);
    } catch (e) {
      expect(String((e as Error).message)).not.toContain(SECRET);
      return (e as TokenFileError).code;
    }
    return 'accepted';
  };

  it('reads a 0600 regular file, trimmed, and never prints it', async () => {
    const t = await readTokenFile(file('ok', 0o600));
    expect(t.reveal()).toBe(SECRET);
    expect(`${t}`).toBe('[redacted]');
    expect(JSON.stringify({ t })).not.toContain(SECRET);
    expect(inspect({ t })).not.toContain(SECRET);
  });

  it('refuses group or world permissions, symlinks, directories, missing and empty files', async () => {
    expect(await code(file('wide', 0o644))).toBe('token_file_mode');
    expect(await code(file('group', 0o640))).toBe('token_file_mode');
    const link = join(dir, 'link');
    symlinkSync(file('target', 0o600), link);
    expect(await code(link)).toBe('token_file_symlink');
    mkdirSync(join(dir, 'd'));
    expect(await code(join(dir, 'd'))).toBe('token_file_not_regular');
    expect(await code(join(dir, 'absent'))).toBe('token_file_missing');
    const empty = join(dir, 'empty');
    writeFileSync(empty, '\n');
    chmodSync(empty, 0o600);
    expect(await code(empty)).toBe('token_file_empty');
  });
});
