import { markerSpans, PrivacyCategory, redactionMarker, ReportCategory } from './categories';
import { Detector, DETECTORS } from './detectors';

export interface Finding {
  category: PrivacyCategory;
  /** UTF-16 offsets into the scanned text, end exclusive. */
  start: number;
  end: number;
}

export interface ScanOptions {
  /**
   * Also report public IPv4 addresses (loopback, private, link-local and documentation ranges are
   * never reported). Off by default: check logs are full of addresses that identify no one.
   */
  ipv4?: boolean;
}

export interface Redaction {
  category: ReportCategory;
  count: number;
}

export interface RedactionResult {
  text: string;
  redactions: Redaction[];
}

function spanOf(m: RegExpExecArray): [number, number] {
  const groups = m.indices?.groups;
  const span = groups?.secret ?? groups?.qsecret ?? m.indices?.[0];
  return span ? [span[0], span[1]] : [m.index, m.index + m[0].length];
}

function* matches(detector: Detector, text: string): Generator<Finding> {
  const re = new RegExp(detector.pattern.source, detector.pattern.flags);
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    if (m[0].length === 0) {
      re.lastIndex++;
      continue;
    }
    const [start, end] = spanOf(m);
    if (end <= start) continue;
    if (detector.accept && !detector.accept(text.slice(start, end), m, text)) continue;
    yield { category: detector.category, start, end };
  }
}

/**
 * Every credential and personal datum in `text`, non-overlapping and in order. Where two detectors
 * claim overlapping text, the more specific one (earlier in DETECTORS) wins, then the longer span.
 */
export function scanText(text: string, options: ScanOptions = {}): Finding[] {
  const candidates: { finding: Finding; priority: number }[] = [];
  DETECTORS.forEach((detector, priority) => {
    if (detector.category === 'ipv4' && !options.ipv4) return;
    for (const finding of matches(detector, text)) candidates.push({ finding, priority });
  });
  candidates.sort(
    (a, b) =>
      a.priority - b.priority ||
      b.finding.end - b.finding.start - (a.finding.end - a.finding.start) ||
      a.finding.start - b.finding.start,
  );
  // One flag per character keeps the overlap test linear in the text, however many findings.
  // A redaction marker already in the text (a redacted copy scanned again) is never re-redacted:
  // scanning redacted text changes nothing, so the markers it carries keep their categories.
  const taken = new Uint8Array(text.length);
  for (const m of markerSpans(text)) taken.fill(1, m.start, m.end);
  const accepted: Finding[] = [];
  for (const { finding } of candidates) {
    if (taken.subarray(finding.start, finding.end).includes(1)) continue;
    taken.fill(1, finding.start, finding.end);
    accepted.push(finding);
  }
  return accepted.sort((a, b) => a.start - b.start);
}

/** Replaces spans (non-overlapping, sorted) by their markers and counts them per category. */
export function applyRedactions(
  text: string,
  spans: readonly { category: ReportCategory; start: number; end: number }[],
): RedactionResult {
  const counts = new Map<ReportCategory, number>();
  let out = '';
  let at = 0;
  for (const s of spans) {
    out += text.slice(at, s.start) + redactionMarker(s.category);
    at = s.end;
    counts.set(s.category, (counts.get(s.category) ?? 0) + 1);
  }
  out += text.slice(at);
  const redactions = [...counts]
    .map(([category, count]) => ({ category, count }))
    .sort((a, b) => a.category.localeCompare(b.category));
  return { text: out, redactions };
}

/** `scanText`, then each finding replaced by `[redacted:<category>]`. */
export function redactText(text: string, options: ScanOptions = {}): RedactionResult {
  return applyRedactions(text, scanText(text, options));
}
