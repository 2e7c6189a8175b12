import { assertSafeId } from '@caseloop/contracts';

const REVISION = /^[0-9a-f]{40}([0-9a-f]{24})?$/;
const SHA256 = /^[0-9a-f]{64}$/;

/**
 * Content-addressed and scoped to the case and the revision the proof belongs to: the same bytes
 * stored twice land on the same key, and a key alone says which case and revision it proves.
 */
export function artifactKey(caseId: string, revision: string, sha256: string): string {
  assertSafeId('caseId', caseId);
  if (!REVISION.test(revision)) throw new RangeError('revision must be a full lower-case git object id');
  if (!SHA256.test(sha256)) throw new RangeError('sha256 must be 64 lower-case hex digits');
  return `cases/${caseId}/${revision}/${sha256}`;
}
