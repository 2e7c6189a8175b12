import { draft, eventDefinition, EventDraft, RecordedEvent } from '@caseloop/contracts';
import { evidenceLinkUrl, isShareable } from './evidence-link.policy';

const CASE = 'C01JLINKPOLICY000000000000000';
const REV = 'b'.repeat(40);
const SHA = 'c'.repeat(64);
const KEY = `cases/${CASE}/${REV}/${SHA}`;

const ledger = (drafts: EventDraft[]): RecordedEvent[] =>
  drafts.map((d, i) => {
    const def = eventDefinition(d.type);
    if (!def) throw new Error(d.type);
    return {
      eventId: `c${i}:0`,
      type: d.type,
      version: def.version,
      aggregate: 'case',
      aggregateId: CASE,
      producer: def.producer,
      commandId: `c${i}`,
      causationId: null,
      correlationId: 'x',
      occurredAt: '2026-11-29T20:00:00.000Z',
      data: def.schema.parse(d.data),
      seq: i + 1,
      subject: `caseloop.case.${CASE}.${def.producer}`,
    } as RecordedEvent;
  });

const reviewed = (decision: 'cleared' | 'redacted' | 'needs_human' | 'rejected') =>
  draft('ArtifactReviewed', {
    artifactId: 'cap-1',
    kind: 'screenshot',
    sha256: SHA,
    decision,
    redactions: [],
    basis: 'test',
  });
const stored = draft('ArtifactStored', {
  artifactId: 'cap-1',
  kind: 'screenshot',
  key: KEY,
  sha256: SHA,
  bytes: 1,
  contentType: 'image/png',
  revision: REV,
  captureId: 'cap-1',
  leaseToken: 3,
});

describe('evidence links', () => {
  it('links only what was stored verified and cleared by review', () => {
    expect(isShareable(ledger([reviewed('cleared'), stored]), KEY)).toBe(true);
    expect(isShareable(ledger([reviewed('redacted'), stored]), KEY)).toBe(true);
    expect(isShareable(ledger([reviewed('cleared')]), KEY)).toBe(false);
    expect(isShareable(ledger([reviewed('rejected'), stored]), KEY)).toBe(false);
  });

  it('links a screenshot that needed a human only after a reviewer approved its digest', () => {
    expect(isShareable(ledger([reviewed('needs_human'), stored]), KEY)).toBe(false);
    const approved = draft('PrivacyApproved', { reviewerId: '1', messageId: '2', artifactSha256: SHA });
    expect(isShareable(ledger([reviewed('needs_human'), stored, approved]), KEY)).toBe(true);
  });

  it('addresses the evidence service, never the bucket', () => {
    expect(evidenceLinkUrl('https://ev.example/', KEY)).toBe(`https://ev.example/evidence/${KEY}`);
  });
});
