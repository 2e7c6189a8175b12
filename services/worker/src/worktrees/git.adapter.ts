/** The worker runs git through the platform's runner, as the evidence service does (one set of safeguards). */
export { Git, GitError, installAskpass } from '@caseloop/platform';
