import { EventData } from '@caseloop/contracts';
import { parseReadinessAnswer, readinessPrompt } from '@caseloop/identity';
import {
  CASE_ID,
  context,
  decide,
  identity,
  ofType,
  record,
  recorded,
  source,
  types,
} from '../cases/decision/case.fixtures';
import { assessReadiness, withJudgement } from './readiness.rules';

const base = {
  attachments: 0,
  keptRatio: 1,
  route: { channelId: '1', repository: 'web', owner: 'web-team' },
  repositories: [{ id: 'web', owner: 'web-team' }],
  regression: false,
};
const ROUTE = 'openai:judge-1@local';

const judged = (
  supplied: EventData<'ReadinessJudged'>['supplied'],
  extra: Partial<EventData<'ReadinessJudged'>> = {},
): EventData<'ReadinessJudged'> => ({
  route: ROUTE,
  promptHash: `sha256:${'9'.repeat(64)}`,
  supplied,
  missing: (['environment', 'expected', 'actual', 'steps', 'impact', 'evidence'] as const).filter(
    (a) => !supplied.includes(a),
  ),
  rationale: 'because',
  fallback: null,
  durationMs: 12,
  ...extra,
});

describe('readiness with a route’s verdict', () => {
  it('takes the verdict for the content fields, keeps the rules’ notes, and leaves privacy scope and owner alone', () => {
    const offline = assessReadiness({ ...base, texts: ['Das Diagramm bleibt leer. Expected a chart.'] });
    expect(offline.found.expected).toBeDefined();
    const r = withJudgement(offline, {
      route: ROUTE,
      supplied: ['expected', 'actual', 'steps', 'impact'],
    });
    expect(r.found.expected).toBe(offline.found.expected);
    expect(r.found.actual).toBe(`judged supplied by ${ROUTE}`);
    // Steps to reproduce are evidence.
    expect(r.found.evidence).toBe(`judged supplied by ${ROUTE}`);
    expect(r.found.privacy_scope).toBe(offline.found.privacy_scope);
    expect(r.found.owner).toBe(offline.found.owner);
    // Only a soft field is left: nothing blocks.
    expect(r.unknown).toEqual(['environment']);
    expect(r.missing).toEqual([]);
  });

  it('drops what the rules matched by accident when the route says it is not there', () => {
    const offline = assessReadiness({
      ...base,
      texts: ['You should see my screenshot of the error on Chrome, it is urgent'],
    });
    expect(offline.missing).toEqual([]);
    const r = withJudgement(offline, { route: ROUTE, supplied: ['environment', 'impact'] });
    expect(r.missing).toEqual(['expected', 'actual', 'evidence']);
    expect(r.found.environment).toBe(offline.found.environment);
  });

  it('parses the structured answer bare, fenced or in prose, and refuses one that lacks an aspect', () => {
    const full =
      '{"supplied":{"environment":true,"expected":false,"actual":true,"steps":false,"impact":false,"evidence":true},"rationale":"x"}';
    expect(parseReadinessAnswer(full)?.supplied.actual).toBe(true);
    expect(parseReadinessAnswer('Here:\n```json\n' + full + '\n```')?.supplied.environment).toBe(true);
    expect(parseReadinessAnswer('{"supplied":{"environment":true},"rationale":"x"}')).toBeNull();
    expect(parseReadinessAnswer('no idea')).toBeNull();
  });

  it('asks about the conversation and the attachment names only', () => {
    const p = readinessPrompt({ conversation: 'Report:\nit breaks', attachments: ['a.png', 'b.log'] });
    expect(p).toContain('CONVERSATION:\nReport:\nit breaks');
    expect(p).toContain('ATTACHMENTS: a.png, b.log');
    expect(readinessPrompt({ conversation: 'x', attachments: [] })).toContain('ATTACHMENTS: none');
  });
});

describe('case decider with a readiness judgement', () => {
  const vague = source(3, 'das Exportding ist wieder kaputt');
  const open = { kind: 'open_case' as const, caseId: CASE_ID, source: vague, identity };

  it('records the judgement with the decision it informs and dispatches on it', () => {
    const out = decide(
      [],
      open,
      context([vague], { readinessJudgement: judged(['expected', 'actual', 'steps']) }),
    );
    expect(types(out)).toEqual([
      'CaseOpened',
      'CaseClassified',
      'PrivacyScopeSet',
      'ReadinessJudged',
      'ReadinessConfirmed',
      'TaskAssigned',
      'DeliveryRequested',
    ]);
    expect(ofType(out, 'ReadinessJudged')[0]).toEqual(judged(['expected', 'actual', 'steps']));
  });

  it('a fallback is recorded and the rules decide as they would without a route', () => {
    const without = decide([], open, context([vague]));
    const fallback = judged([], {
      missing: [],
      fallback: { reason: 'timeout', detail: 'no answer in 1500 ms' },
    });
    const out = decide([], open, context([vague], { readinessJudgement: fallback }));
    expect(out.filter((d) => d.type !== 'ReadinessJudged')).toEqual(without);
    expect(ofType(out, 'ReadinessJudged')).toEqual([fallback]);
  });

  it('does not record a judgement the case already has for the same prompt', () => {
    const j = judged(['environment', 'expected', 'actual', 'impact', 'evidence']);
    const first = decide([], open, context([vague], { readinessJudgement: judged([]) }));
    expect(ofType(first, 'ClarificationRequested')).toHaveLength(1);
    const history = record([...first, { type: 'ReadinessJudged', data: j }]);
    const reply = source(4, 'Antwort', {
      place: { ...vague.place, threadId: vague.place.messageId, messageId: '300000000000000099' },
    });
    const out = decide(
      history,
      { kind: 'link_source', source: reply, via: 'thread', identity },
      context([vague, reply], { readinessJudgement: j }),
    );
    expect(types(out)).not.toContain('ReadinessJudged');
    expect(types(out)).toContain('TaskAssigned');
  });

  it('is not consulted once a reviewer vouched for the case', () => {
    const fb = source(5, 'Feature request: it would be great to have a Gantt view for projects');
    const h = record(decide([], { kind: 'open_case', caseId: CASE_ID, source: fb, identity }, context([fb])));
    const made = recorded(
      'CaseMadeActionable',
      { reviewerId: '700000000000000001', messageId: '700000000000000002', note: 'do it' },
      'intake',
    );
    const out = decide(
      [...h, made],
      { kind: 'observe', event: made },
      context([fb], { readinessJudgement: judged([]) }),
    );
    expect(types(out)).toEqual(['ReadinessConfirmed', 'TaskAssigned', 'DeliveryRequested']);
  });
});
