import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { Script, createContext } from 'node:vm';
import { isNode, LineCounter, parseDocument, YAMLError } from 'yaml';
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
    title: z.string().min(1).max(500).optional(),
    selector,
    path: z.string().startsWith('/').max(1024).optional(),
  })
  .strict()
  .refine((i) => i.title !== undefined || i.path !== undefined, {
    message: 'names the page by title or by path (a page without <title>: path and selector)',
  });

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
  z
    .object({
      capture: z
        .object({
          name: z.string().min(1).max(100),
          expect: identity,
          fullPage: z.boolean().optional(),
          element: selector.optional(),
        })
        .strict()
        .refine((c) => !(c.fullPage && c.element), { message: 'fullPage or element, not both' }),
    })
    .strict(),
]);

const STEP_NAMES = [
  'goto',
  'click',
  'fill',
  'press',
  'selectOption',
  'waitFor',
  'expectText',
  'expectVisible',
  'expectTitle',
  'capture',
];
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
      else
        await cl.capture(s.capture.name, {
          expect: s.capture.expect,
          ...(s.capture.fullPage !== undefined ? { fullPage: s.capture.fullPage } : {}),
          ...(s.capture.element !== undefined ? { element: s.capture.element } : {}),
        });
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
      `${file}: a flow is .yaml, .yml, .json, .js or .cjs, not ${ext || 'a file without extension'}. Fix: rename it, or point client.flow at the flow file`,
    );
  }
  let source: string;
  try {
    source = await readFile(file, 'utf8');
  } catch (e) {
    throw new FlowLoadError(
      `${file}: cannot read the flow (${(e as NodeJS.ErrnoException).code ?? 'error'}). Fix: client.flow is relative to the repositories file`,
    );
  }
  return declarative ? loadDeclarative(source, file) : loadModule(source, file);
}

/** What to write instead, for the most common mistakes in a declarative step. */
function fixFor(issue: z.core.$ZodIssue, raw: unknown): string {
  const last = issue.path.at(-1);
  if (issue.path.length === 0 || (issue.path.length === 1 && last === 'steps'))
    return 'the file is `steps:` followed by a list of steps';
  if (issue.path.length === 2 && typeof last === 'number') {
    const step = (raw as { steps?: unknown[] })?.steps?.[last];
    const keys = step && typeof step === 'object' ? Object.keys(step) : [];
    const unknown = keys.filter((k) => !STEP_NAMES.includes(k));
    if (unknown.length)
      return `"${unknown[0]}" is not a step; each step is exactly one of ${STEP_NAMES.join(', ')}`;
    if (keys.length !== 1) return `each step has exactly one key (${STEP_NAMES.join(', ')})`;
    return `${keys[0]} takes ${STEP_ARGS[keys[0] as string] ?? 'other arguments'}`;
  }
  if (issue.path.includes('expect'))
    return 'expect: { selector: "<visible element>", title: "<document title>" } or, for a page without <title>, { path: "/page", selector: "..." }';
  if (issue.path.includes('capture')) return `capture takes ${STEP_ARGS.capture}`;
  const step = issue.path[2];
  return typeof step === 'string' && STEP_ARGS[step]
    ? `${step} takes ${STEP_ARGS[step]}`
    : 'see docs/target-repositories.md';
}

const STEP_ARGS: Record<string, string> = {
  goto: 'a path on the app, e.g. `goto: /cart`',
  click: 'a selector, e.g. `click: "#add"`',
  fill: '{ selector, value }',
  press: '{ selector, key }',
  selectOption: '{ selector, value }',
  waitFor: '{ selector, timeoutMs? }',
  expectText: '{ selector, text, timeoutMs? }',
  expectVisible: '{ selector, timeoutMs? }',
  expectTitle: '{ title, timeoutMs? }',
  capture: '{ name, expect: { selector, title and/or path }, fullPage?: true | element?: "<selector>" }',
};

function loadDeclarative(source: string, file: string): FlowFunction {
  const lines = new LineCounter();
  const doc = parseDocument(source, { lineCounter: lines, prettyErrors: false });
  const syntax = doc.errors[0];
  if (syntax) {
    const line = syntaxLine(syntax, lines);
    throw new FlowLoadError(
      `${file}${line ? `:${line}` : ''}: the flow is not valid YAML or JSON (${syntax.code}). Fix: check the indentation and quote selectors that start with # or contain ": "`,
    );
  }
  const raw: unknown = doc.toJS();
  const parsed = declarativeFlow.safeParse(raw);
  if (!parsed.success) {
    // A union reports every branch; the first issue of the step is the one that names its key.
    const first = parsed.error.issues[0] as z.core.$ZodIssue;
    const where = parsed.error.issues.map((i) => i.path.map(String).join('.') || '(root)');
    const at = stepPath(first.path);
    const node = doc.getIn(at, true);
    const offset = isNode(node) && node.range ? node.range[0] : 0;
    const line = lines.linePos(offset).line;
    throw new FlowLoadError(
      `${file}:${line}: the flow has invalid steps at ${[...new Set(where)].slice(0, 5).join(', ')}. Fix: ${fixFor(first, raw)}`,
    );
  }
  return declarativeFlowFunction(parsed.data);
}

/** The deepest path that exists in the document (a missing key is reported at its parent). */
function stepPath(path: readonly PropertyKey[]): (string | number)[] {
  return path.filter((p): p is string | number => typeof p !== 'symbol');
}

function syntaxLine(e: YAMLError, lines: LineCounter): number | null {
  if (e.linePos?.[0]) return e.linePos[0].line;
  return typeof e.pos?.[0] === 'number' ? lines.linePos(e.pos[0]).line : null;
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
    const line = moduleLine(e, file);
    const message = (e as Error)?.message ?? String(e);
    const fix = /require is not defined|process is not defined|import/.test(message)
      ? 'a flow gets only `cl` (no require, process or import): use `module.exports = async function flow(cl) { ... }`'
      : e instanceof SyntaxError || (e as Error)?.name === 'SyntaxError'
        ? 'flows are CommonJS JavaScript (no TypeScript, no ES module syntax)'
        : 'only define the function at the top level; the flow runs later, with `cl`';
    throw new FlowLoadError(
      `${file}${line ? `:${line}` : ''}: the flow does not evaluate: ${message}. Fix: ${fix}`,
    );
  }
  const exported = module.exports as { default?: unknown } | unknown;
  const fn =
    typeof exported === 'function'
      ? exported
      : typeof (exported as { default?: unknown })?.default === 'function'
        ? (exported as { default: unknown }).default
        : null;
  if (typeof fn !== 'function')
    throw new FlowLoadError(
      `${file}: the flow module exports no function. Fix: module.exports = async function flow(cl) { ... }`,
    );
  return fn as FlowFunction;
}

/** The line in the flow file a thrown error points at: the first stack frame (or syntax error header) in it. */
function moduleLine(e: unknown, file: string): number | null {
  const stack = String((e as Error)?.stack ?? '');
  const escaped = file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const m = new RegExp(`${escaped}:(\\d+)`).exec(stack);
  return m ? Number(m[1]) : null;
}
