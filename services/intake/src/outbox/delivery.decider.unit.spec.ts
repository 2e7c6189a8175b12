import { ChunkProgress, nextDeliveryStep } from './delivery.decider';

const intended: ChunkProgress = {
  status: 'intended',
  nonce: 'n',
  channelId: '1',
  threadId: '2',
  contentSha256: 'a'.repeat(64),
  intendedAt: '2026-11-29T10:00:00.000Z',
};
const confirmed: ChunkProgress = { status: 'confirmed', discordMessageId: '9', threadId: '2' };
const refused: ChunkProgress = { status: 'refused', reason: 'discord_error' };

describe('the outbox decider', () => {
  it('posts chunks in order and finishes when every chunk is confirmed', () => {
    expect(nextDeliveryStep(['a', 'b'], new Map(), 2000)).toEqual({ kind: 'post', index: 0 });
    expect(nextDeliveryStep(['a', 'b'], new Map([[0, confirmed]]), 2000)).toEqual({ kind: 'post', index: 1 });
    expect(
      nextDeliveryStep(
        ['a', 'b'],
        new Map([
          [0, confirmed],
          [1, confirmed],
        ]),
        2000,
      ),
    ).toEqual({ kind: 'done' });
    expect(nextDeliveryStep([], new Map(), 2000)).toEqual({ kind: 'done' });
  });

  it('refuses a chunk longer than the limit instead of posting it', () => {
    expect(nextDeliveryStep(['x'.repeat(2001)], new Map(), 2000)).toEqual({
      kind: 'refuse',
      index: 0,
      reason: 'too_long',
    });
    expect(nextDeliveryStep(['ok', 'x'.repeat(11)], new Map([[0, confirmed]]), 10)).toEqual({
      kind: 'refuse',
      index: 1,
      reason: 'too_long',
    });
  });

  it('reconciles an open intent before anything else', () => {
    expect(nextDeliveryStep(['a', 'b'], new Map([[0, intended]]), 2000)).toEqual({
      kind: 'reconcile',
      index: 0,
    });
  });

  it('a chunk not confirmed stops the rest: each later chunk is refused, then the delivery is done', () => {
    expect(nextDeliveryStep(['a', 'b', 'c'], new Map([[0, refused]]), 2000)).toEqual({
      kind: 'refuse',
      index: 1,
      reason: 'previous_chunk_unconfirmed',
    });
    const p = new Map<number, ChunkProgress>([
      [0, refused],
      [1, { status: 'refused', reason: 'previous_chunk_unconfirmed' }],
      [2, { status: 'refused', reason: 'previous_chunk_unconfirmed' }],
    ]);
    expect(nextDeliveryStep(['a', 'b', 'c'], p, 2000)).toEqual({ kind: 'done' });
  });
});
