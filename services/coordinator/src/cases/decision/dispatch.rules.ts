import { isTerminal } from '@caseloop/case-model';
import { draft, EventDraft } from '@caseloop/contracts';
import { nextDialogueStep } from '../../triage/dialogue.rules';
import { assessReadiness, withJudgement } from '../../triage/readiness.rules';
import { classifyByRules, DISPATCHABLE } from '../../triage/triage.rules';
import { CaseContext } from '../case.commands';
import { deliveryId, taskIdForCase } from '../case.ids';
import { CaseRecord } from './case-record.evolve';
import { PrivacyScope } from '../../triage/privacy-scope';
import { say, toFirst } from './case.wording';

export interface Dispatch {
  drafts: EventDraft[];
  next: { kind: 'question' | 'task' | 'waiting'; content: string };
}

/**
 * Triage, privacy scope and readiness; assigns the one task when everything is clear. `opening`:
 * the acknowledgement names the next step, so no separate "actionable" notice is posted.
 */
export function dispatch(
  state: CaseRecord,
  scope: PrivacyScope,
  ctx: CaseContext,
  opening: boolean,
): Dispatch {
  const drafts: EventDraft[] = [];
  const waiting = (content: string): Dispatch => ({ drafts, next: { kind: 'waiting', content } });
  if (isTerminal(state.status) || state.task !== 'none') return waiting('');
  const triage = ctx.classifier ?? classifyByRules({ texts: scope.texts, keptRatio: scope.keptRatio });
  if (state.classification !== triage.classification) {
    drafts.push(
      draft('CaseClassified', {
        classification: triage.classification,
        confidence: triage.confidence,
        reasons: triage.reasons.slice(0, 20),
        by: ctx.classifier ? 'classifier' : 'rules',
      }),
    );
  }
  const last = state.rules.lastScope;
  if (!last || last.brief !== scope.brief || last.categories.join() !== scope.categories.join()) {
    drafts.push(
      draft('PrivacyScopeSet', {
        categories: scope.categories,
        redactions: scope.redactions,
        sanitizedBrief: scope.brief,
      }),
    );
  }
  const human = state.madeActionableBy !== null;
  if (!human && !DISPATCHABLE.includes(triage.classification))
    return waiting(say.waiting(triage.classification));
  const offline = assessReadiness({
    texts: scope.texts,
    attachments: ctx.sources.reduce((n, s) => n + s.attachments, 0),
    keptRatio: scope.keptRatio,
    route: ctx.route,
    repositories: ctx.repositories,
    regression: triage.classification === 'regression',
  });
  // A readiness route's answer about this conversation: recorded once with the decision it
  // informs; a fallback leaves the rules' result as it was.
  const judged = human ? null : (ctx.readinessJudgement ?? null);
  if (judged && !state.rules.readinessJudged.some((j) => j.promptHash === judged.promptHash))
    drafts.push(draft('ReadinessJudged', judged));
  const readiness =
    judged && !judged.fallback
      ? withJudgement(offline, { route: judged.route, supplied: judged.supplied })
      : offline;
  const repo = ctx.repositories.find((r) => r.id === readiness.repository);
  // A reviewer who makes the case actionable vouches for everything but the owner.
  const missing = (human ? readiness.missing.filter((f) => f === 'owner') : readiness.missing).filter(
    (f) => f !== 'owner' || !repo,
  );
  if (!repo && !missing.includes('owner')) missing.push('owner');
  if (missing.length > 0) {
    const step = nextDialogueStep({
      caseId: state.caseId,
      missing,
      found: readiness.found,
      asked: state.rules.asked,
      newSinceLastQuestion: state.rules.mayAsk,
      maxQuestions: ctx.maxQuestions,
      handedOff: state.rules.handedOff,
    });
    if (step.kind === 'wait') return waiting(say.stillMissing);
    if (step.kind === 'handoff') {
      drafts.push(draft('ClarificationHandedOff', { missing, known: step.known, rounds: step.rounds }));
      drafts.push(...toFirst(state, 'notice', deliveryId('handoff', state.caseId), step.message));
      return { drafts, next: { kind: 'waiting', content: step.message } };
    }
    drafts.push(draft('ClarificationRequested', { missing, question: step.question }));
    drafts.push(
      ...toFirst(
        state,
        'question',
        deliveryId('question', state.caseId, String(state.questionsAsked + 1)),
        step.question,
      ),
    );
    return { drafts, next: { kind: 'question', content: step.question } };
  }
  const owner = readiness.owner ?? repo!.owner;
  const taskId = taskIdForCase(state.caseId, state.openedAt);
  drafts.push(draft('ReadinessConfirmed', { owner, repository: repo!.id }));
  drafts.push(
    draft('TaskAssigned', {
      taskId,
      repository: repo!.id,
      targetBranch: repo!.targetBranch,
      targetRevision: null,
      brief: scope.brief,
    }),
  );
  const next = say.working(taskId, repo!.id, repo!.targetBranch);
  if (!opening)
    drafts.push(...toFirst(state, 'notice', deliveryId('task', taskId), say.actionable(state.caseId, next)));
  return { drafts, next: { kind: 'task', content: next } };
}

/**
 * A task the worker has gone silent on (its process restarted and lost it) is resumed, same task
 * id: the worker picks up TaskResumed like TaskAssigned. Once per silence, since the resume is news.
 */
export function idleTask(state: CaseRecord, ctx: CaseContext): EventDraft[] {
  if (state.status !== 'in_progress' || state.task !== 'active' || !state.taskId) return [];
  const last = state.rules.taskActivity;
  if (!last || Date.parse(ctx.now) - Date.parse(last.at) < ctx.taskIdleMs) return [];
  return [
    draft('TaskResumed', {
      taskId: state.taskId,
      reason: 'worker_restart',
      note: `No worker event since ${last.at} (${last.type}); resuming the same task.`,
    }),
  ];
}
