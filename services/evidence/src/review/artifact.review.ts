import { redactText, type Redaction } from '@caseloop/privacy';

/**
 * The privacy review every artifact passes before it is stored for sharing. Pure: the same
 * artifact always gets the same decision, so a redelivered event reviews identically.
 */
export type ArtifactUnderReview =
  | { kind: 'check_log' | 'diff' | 'receipt'; text: string }
  | { kind: 'screenshot' | 'trace'; bytes: Uint8Array; fixtureData: boolean };

export type ReviewDecision = 'cleared' | 'redacted' | 'needs_human';

export interface ArtifactReview {
  decision: ReviewDecision;
  /** What may be stored: the redacted text, or the image as taken. */
  content: Uint8Array;
  contentType: string;
  redactions: Redaction[];
  basis: string;
}

const CONTENT_TYPES = {
  check_log: 'text/plain; charset=utf-8',
  diff: 'text/x-diff; charset=utf-8',
  receipt: 'text/markdown; charset=utf-8',
  screenshot: 'image/png',
  trace: 'application/zip',
} as const;

const encoder = new TextEncoder();

export function reviewArtifact(artifact: ArtifactUnderReview): ArtifactReview {
  switch (artifact.kind) {
    case 'check_log':
    case 'diff':
    case 'receipt': {
      const { text, redactions } = redactText(artifact.text);
      const found = redactions.reduce((n, r) => n + r.count, 0);
      return {
        decision: found === 0 ? 'cleared' : 'redacted',
        content: encoder.encode(text),
        contentType: CONTENT_TYPES[artifact.kind],
        redactions,
        basis:
          found === 0
            ? 'scanned for credentials and personal data: none found'
            : `scanned: ${found} finding(s) replaced by markers before storage`,
      };
    }
    case 'screenshot':
    case 'trace':
      // Pixels cannot be scanned reliably: only the flow's own declaration of fixture data clears them.
      return artifact.fixtureData
        ? {
            decision: 'cleared',
            content: artifact.bytes,
            contentType: CONTENT_TYPES[artifact.kind],
            redactions: [],
            basis: 'the client flow declares it runs on fixture data',
          }
        : {
            decision: 'needs_human',
            content: artifact.bytes,
            contentType: CONTENT_TYPES[artifact.kind],
            redactions: [],
            basis: 'not declared fixture data: an allowlisted reviewer must approve it before it is shared',
          };
  }
}

/** Redacts a short free text (a failure reason) before it becomes part of an event. */
export const redactedLine = (text: string): string => redactText(text).text;
