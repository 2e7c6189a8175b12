/**
 * Every way a message can break its contract. Transports map these codes once:
 * a consumer dead-letters them (they never get better by retrying), a CLI prints them.
 */
export type ContractErrorCode =
  | 'malformed_json'
  | 'invalid_envelope'
  | 'unknown_event_type'
  | 'unknown_event_version'
  | 'subject_mismatch'
  | 'producer_not_owner'
  | 'invalid_payload'
  | 'unsafe_id'
  | 'oversized_event';

export class ContractError extends Error {
  constructor(
    readonly code: ContractErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(`${code}: ${message}`);
    this.name = 'ContractError';
  }
}

export const isContractError = (e: unknown): e is ContractError => e instanceof ContractError;

/**
 * The contract breaks a reader passes over when it loads an aggregate to fold or decide (and the
 * consumers dead-letter, so each becomes a finding): none of them is a fact this reader could use.
 * - `unknown_event_type`, `unknown_event_version`: written by a newer producer (a rolling upgrade).
 *   This reader has no rule that refers to the fact, and a newer version may have changed what a
 *   field means, so reading it as the version it knows would be a guess. The fold goes on as if the
 *   fact had not happened yet: the state a reader of this release would have had a moment before.
 * - `subject_mismatch`, `producer_not_owner`: not a fact of this aggregate or not its producer's to
 *   state (a forged or misaddressed message): folding it would be the unsafe choice.
 * - `malformed_json`, `invalid_envelope`, `oversized_event`: nothing in it can be read; the store's
 *   own appends never produce them.
 * Not passed over: `invalid_payload` — a type and version this reader knows, whose data its own
 * schema refuses. That is a fact the fold is meant to apply; guessing it away could flip a decision,
 * so a load that decides an append fails naming the sequence until the message is dealt with.
 */
export const PASSED_OVER_ON_LOAD: ReadonlySet<ContractErrorCode> = new Set<ContractErrorCode>([
  'unknown_event_type',
  'unknown_event_version',
  'subject_mismatch',
  'producer_not_owner',
  'malformed_json',
  'invalid_envelope',
  'oversized_event',
]);
