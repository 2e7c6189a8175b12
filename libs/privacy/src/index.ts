export * from './categories';
export { scanText, redactText, applyRedactions } from './scanner';
export type { Finding, ScanOptions, Redaction, RedactionResult } from './scanner';
export { sanitizeReport, DEFAULT_PRIVATE_MARKERS } from './report';
export type { SanitizeOptions, SanitizedReport } from './report';
export { entropy } from './detectors';
