import { splitIntoChunks } from './chunking';
import { chunkNonce, noticeNonce } from './nonce';

describe('splitIntoChunks', () => {
  it('keeps a short reply whole', () => {
    expect(splitIntoChunks('hello\n\nworld', 2000)).toEqual(['hello\n\nworld']);
  });

  it('splits on paragraph boundaries first', () => {
    const a = 'a'.repeat(60);
    const b = 'b'.repeat(60);
    expect(splitIntoChunks(`${a}\n\n${b}\n\n${a}`, 130)).toEqual([`${a}\n\n${b}`, a]);
  });

  it('then on lines, then hard, never over the limit, losing no text', () => {
    const para = Array.from({ length: 5 }, (_, i) => `${i}`.repeat(40)).join('\n');
    const long = 'z'.repeat(250);
    const chunks = splitIntoChunks(`${para}\n\n${long}`, 100);
    for (const c of chunks) expect(c.length).toBeLessThanOrEqual(100);
    expect(chunks[0]).toBe(`${'0'.repeat(40)}\n${'1'.repeat(40)}`);
    expect(chunks.join('').replace(/\n/g, '')).toBe(para.replace(/\n/g, '') + long);
  });

  it('does not cut a surrogate pair', () => {
    const text = 'a' + '👀'.repeat(10);
    const chunks = splitIntoChunks(text, 4);
    for (const c of chunks) {
      expect(c.length).toBeLessThanOrEqual(4);
      expect(/^[\uDC00-\uDFFF]/.test(c)).toBe(false);
    }
    expect(chunks.join('')).toBe(text);
  });

  it('is deterministic and gives nothing for blank content', () => {
    const t = 'x\n\n'.repeat(500);
    expect(splitIntoChunks(t, 200)).toEqual(splitIntoChunks(t, 200));
    expect(splitIntoChunks('  \n\n ', 2000)).toEqual([]);
  });
});

describe('nonces', () => {
  it('are at most 25 characters, stable, and distinct per case, delivery and chunk', () => {
    const n = chunkNonce('C01', 'D01', 0);
    expect(n.length).toBeLessThanOrEqual(25);
    expect(n).toBe(chunkNonce('C01', 'D01', 0));
    // Discord dedupes an enforced nonce per author across channels: one delivery id in two cases differs.
    expect(
      new Set([
        n,
        chunkNonce('C01', 'D01', 1),
        chunkNonce('C01', 'D02', 0),
        chunkNonce('C02', 'D01', 0),
        noticeNonce('5000'),
      ]).size,
    ).toBe(5);
    expect(noticeNonce('5000').length).toBeLessThanOrEqual(25);
  });
});
