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
});
