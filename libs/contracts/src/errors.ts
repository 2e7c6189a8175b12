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
