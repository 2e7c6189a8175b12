import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { Script, createContext } from 'node:vm';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import type { CaseloopFlowApi } from './flow-session';

export type FlowFunction = (cl: CaseloopFlowApi) => Promise<void>;

export class FlowLoadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FlowLoadError';
  }
}

const selector = z.string().min(1).max(500);
const timeoutMs = z.number().int().positive().max(120_000).optional();
const identity = z
  .object({
    title: z.string().min(1).max(500),
    selector,
    path: z.string().startsWith('/').max(1024).optional(),
  })
  .strict();

/** One step of a declarative flow: exactly one key, named after the `cl` call it makes. */
const step = z.union([
  z.object({ goto: z.string().min(1).max(2048) }).strict(),
  z.object({ click: selector }).strict(),
  z.object({ fill: z.object({ selector, value: z.string().max(10_000) }).strict() }).strict(),
  z.object({ press: z.object({ selector, key: z.string().min(1).max(50) }).strict() }).strict(),
  z.object({ selectOption: z.object({ selector, value: z.string().max(1000) }).strict() }).strict(),
  z.object({ waitFor: z.object({ selector, timeoutMs }).strict() }).strict(),
  z.object({ expectText: z.object({ selector, text: z.string().max(10_000), timeoutMs }).strict() }).strict(),
  z.object({ expectVisible: z.object({ selector, timeoutMs }).strict() }).strict(),
  z.object({ expectTitle: z.object({ title: z.string().max(500), timeoutMs }).strict() }).strict(),
  z.object({ capture: z.object({ name: z.string().min(1).max(100), expect: identity }).strict() }).strict(),
]);
export const declarativeFlow = z.object({ steps: z.array(step).min(1).max(500) }).strict();
export type DeclarativeFlow = z.infer<typeof declarativeFlow>;

const opts = (t: number | undefined) => (t === undefined ? undefined : { timeoutMs: t });

/** A declarative flow as the same `cl` calls a module would make: no code from the repository runs. */
export function declarativeFlowFunction(flow: DeclarativeFlow): FlowFunction {
  return async (cl) => {
    for (const s of flow.steps) {
      if ('goto' in s) await cl.goto(s.goto);
      else if ('click' in s) await cl.click(s.click);
      else if ('fill' in s) await cl.fill(s.fill.selector, s.fill.value);
      else if ('press' in s) await cl.press(s.press.selector, s.press.key);
      else if ('selectOption' in s) await cl.selectOption(s.selectOption.selector, s.selectOption.value);
      else if ('waitFor' in s) await cl.waitFor(s.waitFor.selector, opts(s.waitFor.timeoutMs));
      else if ('expectText' in s)
        await cl.expectText(s.expectText.selector, s.expectText.text, opts(s.expectText.timeoutMs));
      else if ('expectVisible' in s)
        await cl.expectVisible(s.expectVisible.selector, opts(s.expectVisible.timeoutMs));
      else if ('expectTitle' in s) await cl.expectTitle(s.expectTitle.title, opts(s.expectTitle.timeoutMs));
      else await cl.capture(s.capture.name, { expect: s.capture.expect });
    }
  };
}

/**
 * Loads a flow. Two forms:
 * - declarative, `.yaml`/`.yml`/`.json`: `steps:` of `goto`, `click`, `fill`, `press`, `selectOption`,
 *   `waitFor`, `expectText`, `expectVisible`, `expectTitle` and `capture`, validated before anything runs;
 * - a CommonJS module, `.js`/`.cjs`: `module.exports = async function flow(cl) { ... }`, evaluated in a
 *   context of its own with no `require`, `process` or host globals. That keeps honest flows honest and
 *   off caseloop's environment; it is not a security boundary against a hostile flow, which is why
 *   flows come from the operators' configuration, not from the change under validation.
 */
export async function loadFlow(file: string): Promise<FlowFunction> {
  const ext = extname(file);
  const declarative = ext === '.yaml' || ext === '.yml' || ext === '.json';
  if (!declarative && ext !== '.js' && ext !== '.cjs') {
    throw new FlowLoadError(
      `a flow is .yaml, .yml, .json, .js or .cjs, not ${ext || 'a file without extension'}`,
    );
  }
  let source: string;
  try {
    source = await readFile(file, 'utf8');
  } catch (e) {
    throw new FlowLoadError(`cannot read the flow (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  return declarative ? loadDeclarative(source) : loadModule(source, file);
}

function loadDeclarative(source: string): FlowFunction {
  let raw: unknown;
  try {
    raw = parseYaml(source);
  } catch {
    throw new FlowLoadError('the flow is not valid YAML or JSON');
  }
  const parsed = declarativeFlow.safeParse(raw);
  if (!parsed.success) {
    const where = parsed.error.issues.map((i) => i.path.map(String).join('.') || '(root)');
    throw new FlowLoadError(`the flow has invalid steps at ${[...new Set(where)].slice(0, 5).join(', ')}`);
  }
  return declarativeFlowFunction(parsed.data);
}

function loadModule(source: string, file: string): FlowFunction {
  const module = { exports: {} as unknown };
  const context = createContext(
    { module, exports: module.exports },
    { codeGeneration: { strings: false, wasm: false } },
  );
  try {
    new Script(`(function (module, exports) {${source}\n})(module, exports);`, {
      filename: file,
    }).runInContext(context, {
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
