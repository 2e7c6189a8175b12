import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CaseloopFlowApi } from './flow-session';
import { FlowLoadError, loadFlow } from './flow.loader';

/** Records the calls a flow makes, in order: what the loader produced, without a browser. */
function recorder(): { cl: CaseloopFlowApi; calls: unknown[][] } {
  const calls: unknown[][] = [];
  const rec =
    (name: string) =>
    async (...args: unknown[]) => {
      calls.push([name, ...args]);
      return name === 'capture' ? 'cap-1' : undefined;
    };
  const cl = {
    baseUrl: 'http://127.0.0.1:1',
    goto: rec('goto'),
    click: rec('click'),
    fill: rec('fill'),
    press: rec('press'),
    selectOption: rec('selectOption'),
    waitFor: rec('waitFor'),
    expectText: rec('expectText'),
    expectVisible: rec('expectVisible'),
    expectTitle: rec('expectTitle'),
    capture: rec('capture'),
  } as unknown as CaseloopFlowApi;
  return { cl, calls };
}

describe('loadFlow', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'evidence-flows-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const file = async (name: string, text: string) => {
    const path = join(dir, name);
    await writeFile(path, text);
    return path;
  };

  it('runs a declarative flow and a module flow as the same calls', async () => {
    const yaml = await loadFlow(join(__dirname, 'fixtures', 'counter.flow.yaml'));
    const js = await loadFlow(join(__dirname, 'fixtures', 'counter.flow.js'));
    const a = recorder();
    const b = recorder();
    await yaml(a.cl);
    await js(b.cl);
    expect(a.calls).toEqual(b.calls);
    expect(a.calls[0]).toEqual(['goto', '/']);
    expect(a.calls.at(-1)).toEqual([
      'capture',
      'total-is-three',
      { expect: { title: 'Counter', selector: '#total', path: '/' } },
    ]);
  });

  it('gives a module flow nothing but cl: no require, no process', async () => {
    const flow = await loadFlow(
      await file(
        'peek.js',
        'module.exports = async (cl) => { await cl.goto(typeof require + "/" + typeof process); };',
      ),
    );
    const r = recorder();
    await flow(r.cl);
    expect(r.calls).toEqual([['goto', 'undefined/undefined']]);
  });

  it('refuses what it cannot run, naming where', async () => {
    await expect(loadFlow(await file('bad.yaml', 'steps:\n  - goto: /\n  - hover: "#x"\n'))).rejects.toThrow(
      /invalid steps at steps\.1/,
    );
    await expect(loadFlow(await file('none.js', 'module.exports = 42;'))).rejects.toThrow(
      'the flow module exports no function',
    );
    await expect(loadFlow(await file('flow.ts', 'export default 1'))).rejects.toBeInstanceOf(FlowLoadError);
    await expect(loadFlow(join(dir, 'missing.yaml'))).rejects.toThrow('cannot read the flow (ENOENT)');
  });

  it('names the file, the line and the fix in every loader error', async () => {
    const bad = await file('hover.yaml', 'steps:\n  - goto: /\n  - hover: "#x"\n');
    await expect(loadFlow(bad)).rejects.toThrow(
      `${bad}:3: the flow has invalid steps at steps.1. Fix: "hover" is not a step`,
    );
    const untitled = await file(
      'untitled.yaml',
      'steps:\n  - goto: /\n  - capture:\n      name: x\n      expect: { selector: "#a" }\n',
    );
    await expect(loadFlow(untitled)).rejects.toThrow(
      new RegExp(
        `^${untitled.replace(/[.]/g, '\\.')}:5: .*steps\\.1\\.capture\\.expect\\. Fix: .*a page without <title>, \\{ path`,
      ),
    );
    const indent = await file('indent.yaml', 'steps:\n  - goto: /\n   - click: x\n');
    await expect(loadFlow(indent)).rejects.toThrow(`${indent}:3: the flow is not valid YAML or JSON`);
    const syntax = await file(
      'syntax.js',
      "'use strict';\nmodule.exports = async (cl) => {\n  await cl.goto('/'\n};\n",
    );
    await expect(loadFlow(syntax)).rejects.toThrow(
      new RegExp(`syntax\\.js:3: the flow does not evaluate: .*Fix: flows are CommonJS`),
    );
    const requires = await file(
      'requires.js',
      "const fs = require('fs');\nmodule.exports = async () => {};\n",
    );
    await expect(loadFlow(requires)).rejects.toThrow(
      /requires\.js:1: .*require is not defined\. Fix: a flow gets only `cl`/,
    );
  });

  it('lets a capture name a page without <title> by path and selector, and shoot the full page or one element', async () => {
    const flow = await loadFlow(
      await file(
        'shapes.yaml',
        [
          'steps:',
          '  - goto: /',
          '  - capture: { name: whole, expect: { path: /, selector: "#app" }, fullPage: true }',
          '  - capture: { name: box, expect: { path: /, selector: "#app" }, element: "#total" }',
        ].join('\n'),
      ),
    );
    const r = recorder();
    await flow(r.cl);
    expect(r.calls.slice(1)).toEqual([
      ['capture', 'whole', { expect: { path: '/', selector: '#app' }, fullPage: true }],
      ['capture', 'box', { expect: { path: '/', selector: '#app' }, element: '#total' }],
    ]);
    await expect(
      loadFlow(
        await file(
          'both.yaml',
          'steps:\n  - capture: { name: x, expect: { path: /, selector: a }, fullPage: true, element: b }\n',
        ),
      ),
    ).rejects.toThrow(/both\.yaml:2: /);
  });
});
