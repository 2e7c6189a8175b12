import { KeyedScheduler } from './keyed-scheduler';

const tick = () => new Promise<void>((r) => setImmediate(r));

function gate() {
  let open!: () => void;
  const p = new Promise<void>((r) => (open = r));
  return { p, open };
}

describe('KeyedScheduler', () => {
  it('runs one task at a time per key, in order, and different keys in parallel up to the bound', async () => {
    const s = new KeyedScheduler(2, 10);
    const log: string[] = [];
    const gates = { a1: gate(), a2: gate(), b1: gate(), c1: gate() };
    const task = (name: keyof typeof gates) => async () => {
      log.push(`start ${name}`);
      await gates[name].p;
      log.push(`end ${name}`);
    };
    s.schedule('a', task('a1'));
    s.schedule('a', task('a2'));
    s.schedule('b', task('b1'));
    s.schedule('c', task('c1'));
    await tick();
    // a2 waits for a1 (same key); c1 waits for a slot (two running).
    expect(log).toEqual(['start a1', 'start b1']);
    gates.a1.open();
    await tick();
    await tick();
    // The freed slot goes to the task that waited for one first (c1); a2 now waits for a slot.
    expect(log.slice(2)).toEqual(['end a1', 'start c1']);
    gates.b1.open();
    await tick();
    await tick();
    expect(log.slice(4)).toEqual(['end b1', 'start a2']);
    gates.a2.open();
    gates.c1.open();
    await s.idle();
    expect(s.size).toBe(0);
  });

  it('keeps going after a task fails', async () => {
    const s = new KeyedScheduler(1, 4);
    const ran: number[] = [];
    s.schedule('k', async () => {
      throw new Error('boom');
    });
    s.schedule('k', async () => {
      ran.push(2);
    });
    await s.idle();
    expect(ran).toEqual([2]);
  });

  it('admits no more than its capacity until tasks finish', async () => {
    const s = new KeyedScheduler(1, 2);
    const g = gate();
    s.schedule('a', () => g.p);
    s.schedule('b', () => g.p);
    let admitted = false;
    const waiting = s.admit().then(() => (admitted = true));
    await tick();
    expect(admitted).toBe(false);
    g.open();
    await waiting;
    expect(admitted).toBe(true);
    await s.idle();
  });
});
