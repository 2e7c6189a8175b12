import { lstat, readFile } from 'node:fs/promises';
import { inspect } from 'node:util';

/**
 * The bot token, wrapped so that string conversion, JSON and `util.inspect` all print
 * `[redacted]`: a careless log line or event cannot carry it.
 */
export class BotToken {
  readonly #value: string;
  constructor(value: string) {
    this.#value = value;
  }
  /** The only way to read it; call sites are the REST and gateway adapters. */
  reveal(): string {
    return this.#value;
  }
  toString(): string {
    return '[redacted]';
  }
  toJSON(): string {
    return '[redacted]';
  }
  [inspect.custom](): string {
    return 'BotToken([redacted])';
  }
}

export type TokenFileErrorCode =
  | 'token_file_missing'
  | 'token_file_symlink'
  | 'token_file_not_regular'
  | 'token_file_mode'
  | 'token_file_empty';

export class TokenFileError extends Error {
  constructor(
    readonly code: TokenFileErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'TokenFileError';
  }
}

/**
 * A regular file (not a symlink, which could point anywhere), readable by its owner only
 * (0600 or stricter). Messages name the path and the problem, never the content.
 */
export async function readTokenFile(path: string): Promise<BotToken> {
  let st;
  try {
    st = await lstat(path);
  } catch {
    throw new TokenFileError('token_file_missing', `token file ${path} does not exist or cannot be read`);
  }
  if (st.isSymbolicLink())
    throw new TokenFileError(
      'token_file_symlink',
      `token file ${path} is a symlink; point the config at the file itself`,
    );
  if (!st.isFile())
    throw new TokenFileError('token_file_not_regular', `token file ${path} is not a regular file`);
  const mode = st.mode & 0o777;
  if ((mode & 0o077) !== 0) {
    throw new TokenFileError(
      'token_file_mode',
      `token file ${path} has mode ${mode.toString(8).padStart(4, '0')}; it must be 0600 (chmod 600 ${path})`,
    );
  }
  const value = (await readFile(path, 'utf8')).trim();
  if (!value) throw new TokenFileError('token_file_empty', `token file ${path} is empty`);
  return new BotToken(value);
}
