import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { Binding, BindingError, parseBinding } from './binding.schema';

/** Reads the binding from a `.yaml`/`.yml` or `.json` file. */
export async function loadBindingFile(path: string): Promise<Binding> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new BindingError(
      'binding_unreadable',
      `binding file ${path} cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  let doc: unknown;
  try {
    doc = extname(path) === '.json' ? JSON.parse(text) : parseYaml(text);
  } catch (e) {
    throw new BindingError(
      'binding_unreadable',
      `binding file ${path} is not valid ${extname(path) === '.json' ? 'JSON' : 'YAML'}: ${(e as Error).message.split('\n')[0]}`,
    );
  }
  return parseBinding(doc);
}
