import { nextDialogueStep, AskedBefore, roundsWithoutProgress } from './dialogue.rules';
import { assessReadiness } from './readiness.rules';

const shop = { channelId: 'bugs', repository: 'shop-cart', owner: 'shop-team' };
const assess = (texts: string[], attachments = 0) =>
  assessReadiness({
    texts,
    attachments,
    keptRatio: 1,
    route: shop,
    repositories: [{ id: 'shop-cart', owner: 'shop-team' }],
    regression: false,
  });

describe('readiness over the whole conversation', () => {
  it("the README's quick-start report is actionable as it stands (it leads straight to a receipt)", () => {
    const r = assess([
      'The cart total ignores quantities: two apples and one cheese show €9.40 instead of €12.90.',
    ]);
    expect(r.missing).toEqual([]);
    expect(r.found.evidence).toMatch(/observed and the expected values/);
    // Where and whom are still unknown, and would be asked for alongside anything that blocks.
    expect(r.unknown).toEqual(['environment', 'impact']);
  });

  it('understands a reply that gives steps as "Steps: …" and the expected value', () => {
    const report = 'The cart total is wrong.';
    const first = assess([report]);
    expect(first.missing).toEqual(expect.arrayContaining(['expected', 'evidence']));
    const reply =
      'Steps: open the shop, add two apples (2 x €1.75) and one cheese, open the cart: the total is €9.40. Expected €12.90.';
    const after = assess([report, reply]);
    expect(after.found.evidence).toBeDefined();
    expect(after.found.expected).toBeDefined();
    expect(after.missing).toEqual([]);
  });

  it('counts attachments that arrive in the thread as evidence', () => {
    expect(assess(['checkout total wrong, expected 12.90'], 0).missing).toContain('evidence');
    expect(assess(['checkout total wrong, expected 12.90', 'here you go'], 1).found.evidence).toMatch(
      /attachment/,
    );
  });

  it('reads template headings, and not a heading left with only its hint under it', () => {
    const r = assess([
      'Expected behavior\nProgram launches\nActual behavior\nProgram crashes instantly\nSteps to reproduce\nLaunch the program',
    ]);
    expect(r.found).toMatchObject({
      expected: expect.any(String),
      actual: expect.any(String),
      evidence: expect.any(String),
    });
    const template = assess([
      '**Expected behavior:**\nButtons should be separated\n**Actual behavior:**\n(Describe actual behavior here)\n**Reproduce steps:**\n(Describe the steps to reproduce the problem here)',
    ]);
    expect(template.found.actual).toBeUndefined();
    expect(template.found.evidence).toBeUndefined();
  });

  it('understands short replies that name the platform, an older version that works, or what was tried', () => {
    const report = 'All settings are reset to default after restarting the app.';
    expect(assess([report]).found.environment).toBeUndefined();
    expect(assess([report, 'Win7 x64.']).found.environment).toBeDefined();
    expect(assess([report, 'Crashes on my Pixel3/Android12.']).found.environment).toBeDefined();
    expect(assess([report, 'Going back to 4.1.3 and it works.']).found.expected).toBeDefined();
    expect(
      assess([report, 'I tried TIFF, JPG and PDF but all had the same result.']).found.evidence,
    ).toBeDefined();
    expect(assess([report, 'Same after updating to 1.407.136.0.']).found.evidence).toBeDefined();
  });

  it('does not take a reply that supplies nothing as supplying something', () => {
    const report = 'Notifications stopped arriving.';
    const before = assess([report]);
    for (const reply of [
      'Same here.',
      'Any update on this?',
      'just tested again, it works now.. not sure what was going on',
      'Is there a date or release when this will work again?',
      "Where can I find the logs? There's nothing in the tomcat logs.",
      "Sure, I'll post the logcat later.",
      'Awesome, thanks.',
    ]) {
      const after = assess([report, reply]);
      expect({ reply, found: Object.keys(after.found) }).toEqual({ reply, found: Object.keys(before.found) });
    }
  });
});

describe('the clarification dialogue', () => {
  const step = (
    missing: Parameters<typeof nextDialogueStep>[0]['missing'],
    asked: AskedBefore[],
    found = {},
  ) =>
    nextDialogueStep({
      caseId: 'C-1',
      missing,
      found,
      asked,
      newSinceLastQuestion: true,
      maxQuestions: 5,
      handedOff: false,
    });

  it('names only what is still missing and thanks for what arrived', () => {
    const q1 = step(['environment', 'expected', 'evidence'], []);
    expect(q1.kind).toBe('ask');
    const first = (q1 as { question: string }).question;
    const q2 = step(['environment'], [{ missing: ['environment', 'expected', 'evidence'], question: first }]);
    expect(q2).toMatchObject({ kind: 'ask', acknowledged: ['expected', 'evidence'] });
    const second = (q2 as { question: string }).question;
    expect(second).toMatch(/that gives us what you expected and the steps and evidence/);
    expect(second).toMatch(/where it happens/);
    expect(second).not.toMatch(/what you expected to happen|steps to reproduce/);
    expect(second).not.toBe(first);
  });

  it('after two rounds without progress hands the case to a reviewer with what is known, instead of asking again', () => {
    const missing = ['expected', 'evidence'] as const;
    const q1 = step([...missing], []) as { question: string };
    const asked1 = [{ missing: [...missing], question: q1.question }];
    const q2 = step([...missing], asked1);
    expect(q2.kind).toBe('ask');
    const asked2 = [...asked1, { missing: [...missing], question: (q2 as { question: string }).question }];
    expect(roundsWithoutProgress(asked2, [...missing])).toBe(2);
    const h = step([...missing], asked2, { actual: 'describes what happens' });
    expect(h).toMatchObject({ kind: 'handoff', rounds: 2, known: ['actual: describes what happens'] });
    expect((h as { message: string }).message).toMatch(
      /a reviewer will take it from here.*Known: what happens instead.*Still missing: what you expected and the steps and evidence/,
    );
  });

  it('never sends the same words twice in a thread', () => {
    const q1 = step(['evidence'], []) as { question: string };
    // The same missing set after a reply that brought something else: a different message, never q1.
    const q2 = step(['evidence'], [{ missing: ['evidence', 'impact'], question: q1.question }]);
    expect(q2.kind === 'ask' ? q2.question : (q2 as { message: string }).message).not.toBe(q1.question);
    // Words already sent are never sent again: a reviewer takes over instead.
    const dup = nextDialogueStep({
      caseId: 'C-1',
      missing: ['evidence'],
      found: {},
      asked: [
        { missing: ['evidence'], question: 'x' },
        {
          missing: ['evidence', 'impact'],
          question:
            'Thanks — that gives us who it affects. To start on case C-1 we still need a screenshot, a log excerpt or the steps to reproduce it.',
        },
      ],
      newSinceLastQuestion: true,
      maxQuestions: 5,
      handedOff: false,
    });
    expect(dup.kind).toBe('handoff');
  });

  it('waits while nothing new arrived, and says nothing once handed off', () => {
    const asked = [{ missing: ['evidence' as const], question: 'q' }];
    expect(
      nextDialogueStep({
        caseId: 'C',
        missing: ['evidence'],
        found: {},
        asked,
        newSinceLastQuestion: false,
        maxQuestions: 3,
        handedOff: false,
      }),
    ).toEqual({ kind: 'wait' });
    expect(
      nextDialogueStep({
        caseId: 'C',
        missing: ['evidence'],
        found: {},
        asked,
        newSinceLastQuestion: true,
        maxQuestions: 3,
        handedOff: true,
      }),
    ).toEqual({ kind: 'wait' });
  });
});
