import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { Script, createContext } from 'node:vm';
import type { CaseloopFlowApi } from './flow-session';

export type FlowFunction = (cl: CaseloopFlowApi) => Promise<void>;

export class FlowLoadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FlowLoadError';
  }
}

/**
 * Loads a flow module (CommonJS: `module.exports = async function flow(cl) { ... }`) into a
 * context of its own, with no `require`, `process` or host globals: a flow describes steps through
 * `cl`, nothing else. This keeps honest flows honest and off caseloop's environment; it is not a
 * security boundary against a hostile flow, which is why flows come from the operators'
 * configuration, not from the change under validation.
 */
export async function loadFlow(file: string): Promise<FlowFunction> {
  const ext = extname(file);
  if (ext !== '.js' && ext !== '.cjs') {
    throw new FlowLoadError(`a flow is a CommonJS .js or .cjs module, not ${ext || 'a file without extension'}`);
  }
  let source: string;
  try {
    source = await readFile(file, 'utf8');
  } catch (e) {
    throw new FlowLoadError(`cannot read the flow (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const module = { exports: {} as unknown };
  const context = createContext({ module, exports: module.exports }, { codeGeneration: { strings: false, wasm: false } });
  try {
    new Script(`(function (module, exports) {${source}\n})(module, exports);`, { filename: file }).runInContext(context, {
      timeout: 1000,
    });
  } catch (e) {
    throw new FlowLoadError(`the flow does not evaluate: ${(e as Error)?.message ?? String(e)}`);
  }
  const exported = module.exports as { default?: unknown } | unknown;
  const fn =
    typeof exported === 'function'
      ? exported
      : typeof (exported as { default?: unknown })?.default === 'function'
        ? (exported as { default: unknown }).default
        : null;
  if (typeof fn !== 'function') throw new FlowLoadError('the flow module exports no function');
  return fn as FlowFunction;
}
