import { lastValueFrom } from 'rxjs';
import { meta, testLedger, TestLedger, withTask } from '../../test/ledger.fixture';
import { AppendResult } from '../event-store';
import { JetStreamClient } from './jetstream.client';

jest.setTimeout(60_000);

describe('JetStreamClient (ClientProxy over the event store)', () => {
  let t: TestLedger;
  let client: JetStreamClient;
  beforeAll(async () => {
    t = await testLedger();
    client = new JetStreamClient(t.ledger, 'lease');
  });
  afterAll(async () => {
    await t.cleanup();
  });

  const command = (aggregateId: string, commandId: string, expectedSeq?: number) => ({
    ...meta(aggregateId, commandId),
    data: withTask('T1').data,
    ...(expectedSeq !== undefined ? { expectedSeq } : {}),
  });

  it('emit() appends one validated event of its own producer and yields the sequence', async () => {
    const res = await lastValueFrom(
      client.emit<AppendResult>('LeaseRequested', command('Cemit', 'emit-1', 0)),
    );
    expect(res.duplicate).toBe(false);
    const loaded = await t.ledger.store.load('case', 'Cemit');
    expect(loaded.events.map((e) => [e.type, e.seq, e.eventId])).toEqual([
      ['LeaseRequested', res.seqs[0], 'emit-1:0'],
    ]);
    const again = await lastValueFrom(
      client.emit<AppendResult>('LeaseRequested', command('Cemit', 'emit-1', 0)),
    );
    expect(again).toEqual({ seqs: res.seqs, duplicate: true });
  });

  it('refuses another producer’s event, an unknown type, an invalid payload and a stale expectation', async () => {
    await expect(lastValueFrom(client.emit('CaseOpened', command('Cx', 'x-1')))).rejects.toMatchObject({
      code: 'permission_denied',
    });
    await expect(lastValueFrom(client.emit('NoSuchEvent', command('Cx', 'x-2')))).rejects.toMatchObject({
      code: 'append_refused',
    });
    await expect(
      lastValueFrom(client.emit('LeaseRequested', { ...command('Cx', 'x-3'), data: { taskId: 'T' } })),
    ).rejects.toMatchObject({
      code: 'invalid_payload',
    });
    await lastValueFrom(client.emit('LeaseRequested', command('Cstale', 'stale-1', 0)));
    await expect(
      lastValueFrom(client.emit('LeaseRequested', command('Cstale', 'stale-2', 0))),
    ).rejects.toMatchObject({
      code: 'concurrency_conflict',
    });
    expect((await t.ledger.store.load('case', 'Cx')).events).toEqual([]);
  });

  it('has no request/response', async () => {
    await expect(lastValueFrom(client.send('LeaseRequested', command('Cy', 'y-1')))).rejects.toThrow(
      /no request\/response/,
    );
  });
});
