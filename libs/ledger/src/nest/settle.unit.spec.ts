import { ContractError } from '@caseloop/contracts';
import { ConcurrencyError, LedgerError, PoisonError, TransientError } from '../errors';
import { nakDelay, settle } from './settle';

describe('settle: the transport’s one error mapping', () => {
  it.each([
    [new ContractError('subject_mismatch', 'x'), { kind: 'poison', code: 'subject_mismatch' }],
    [new ContractError('invalid_payload', 'x'), { kind: 'poison', code: 'invalid_payload' }],
    [new PoisonError('never'), { kind: 'poison', code: 'poison' }],
    [new LedgerError('command_id_reused', 'x'), { kind: 'poison', code: 'command_id_reused' }],
    [new TransientError('busy'), { kind: 'retry' }],
    [new ConcurrencyError('s', 1, 'moved on'), { kind: 'retry' }],
    [new LedgerError('retries_exhausted', 'x'), { kind: 'retry' }],
    [new LedgerError('permission_denied', 'x'), { kind: 'retry' }],
    [new Error('anything else'), { kind: 'retry' }],
    // What Nest's default RPC filter leaves of an error when the transport's filter is missing.
    [{ status: 'error', message: 'Internal server error' }, { kind: 'retry' }],
    ['a thrown string', { kind: 'retry' }],
  ])('%p', (error, expected) => {
    expect(settle(error)).toMatchObject(expected);
  });

  it('keeps the reason', () => {
    expect(settle(new PoisonError('missing repository shop')).reason).toBe('missing repository shop');
    expect(settle({ message: 'plain object' }).reason).toBe('plain object');
  });

  it('backs off exponentially up to the cap', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8].map((n) => nakDelay(n, 1_000, 60_000))).toEqual([
      1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000,
    ]);
  });
});
