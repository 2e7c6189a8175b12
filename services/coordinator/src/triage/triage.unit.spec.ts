import { visibleChars } from '@caseloop/contracts';
import { sanitizeReport } from '@caseloop/privacy';
import { privacyScope, caseTitle } from './privacy-scope';
import { assessReadiness, clarificationQuestion } from './readiness.rules';
import { classifyByRules } from './triage.rules';

const classify = (text: string, keptRatio = 1) => classifyByRules({ texts: [text], keptRatio });

describe('triage rules', () => {
  it.each([
    ['Since the 4.3 update the desktop app crashes on startup with TypeError: x is undefined', 'regression'],
    ['Checkout page goes white, console: Uncaught TypeError: Cannot read properties of undefined', 'bug'],
    ['PDF export truncates wide tables, only 8 of 12 columns show up', 'bug'],
    ['Feature request: it would be great to have a Gantt view for projects', 'feedback'],
    ['Would love bulk editing of due dates, changing 30 tasks one by one is painful', 'feedback'],
    ['How do I transfer workspace ownership to another admin?', 'question'],
    ["Guests get 'access denied' when opening a shared project, they have the viewer role", 'access'],
    ['Inviting members fails with 403 Forbidden, I am a workspace admin', 'access'],
  ])('%s → %s', (text, expected) => {
    const r = classify(text);
    expect(r.classification).toBe(expected);
    expect(r.reasons.length).toBeGreaterThan(0);
  });

  it('calls a report that is mostly private context private_context, whatever else it says', () => {
    expect(classify('Checkout crashes with a TypeError', 0.3)).toMatchObject({
      classification: 'private_context',
    });
  });

  it('treats a report without cues as a bug, with low confidence and a reason saying so', () => {
    const r = classify('hmm look at this');
    expect(r).toMatchObject({ classification: 'bug', confidence: 0.3 });
    expect(r.reasons[0]).toMatch(/no cue matched/);
  });
});

describe('readiness rules', () => {
  const route = { channelId: '1', repository: 'web', owner: 'web-team' };
  const repos = [
    { id: 'web', owner: 'web-team' },
    { id: 'desktop', owner: 'desktop-team' },
  ];
  const assess = (texts: string[], extra: Partial<Parameters<typeof assessReadiness>[0]> = {}) =>
    assessReadiness({
      texts,
      attachments: 0,
      keptRatio: 1,
      route,
      repositories: repos,
      regression: false,
      ...extra,
    });

  it('finds every field in a complete report', () => {
    const r = assess([
      'Chrome 120 on Windows: the export fails with "ENOENT". Expected a CSV. Blocks payroll for all users. Console log attached.',
    ]);
    expect(r.missing).toEqual([]);
    expect(r).toMatchObject({ owner: 'web-team', repository: 'web' });
  });

  it('names what is missing, and a reply fills it in', () => {
    const first = assess(['the export thing is broken again']);
    expect(first.missing).toEqual(['environment', 'expected', 'impact', 'evidence']);
    const both = assess([
      'the export thing is broken again',
      'Windows 11, app 4.3.0. I expected a CSV file. Blocks our payroll run. Screenshot attached.',
    ]);
    expect(both.missing).toEqual([]);
  });

  it('reads what should happen when it quotes text that ends in a question mark', () => {
    const r = assess([
      'On the login page the reset link gives no hint. Steps: open /login in Firefox 128, look under the password field. ' +
        'Expected: the link reads "Forgot your password? Reset it". Actual: it only says "Forgot your password?". ' +
        'Users cannot find how to reset their password.',
    ]);
    expect(r.found.expected).toBeDefined();
    const reply = assess([
      'the reset link is unclear',
      'I expected the link to say "Forgot your password? Reset it"',
    ]);
    expect(reply.found.expected).toBeDefined();
    // A question of the writer's own, quoting or not, still states nothing.
    expect(
      assess(['the reset link is unclear', 'where do I send "Forgot your password?" wording fixes?']).found
        .expected,
    ).toBeUndefined();
  });

  it('counts attachments as evidence and a regression as the expected behaviour', () => {
    const r = assess(['Firefox: the board stopped saving card order, blocks the team'], {
      attachments: 1,
      regression: true,
    });
    expect(r.missing).toEqual([]);
    expect(r.found.evidence).toBe('1 attachment(s)');
  });

  it('needs an owner: from the channel route, or a configured repository named in the text', () => {
    expect(
      assess(['Chrome: export fails, expected CSV, blocks us, log attached'], { route: null }).missing,
    ).toEqual(['owner']);
    const named = assess(['Chrome: export fails in desktop, expected CSV, blocks us, log attached'], {
      route: null,
    });
    expect(named).toMatchObject({ missing: [], repository: 'desktop', owner: 'desktop-team' });
  });

  it('keeps the privacy scope unclear when most of the report was private', () => {
    expect(
      assess(['Chrome: export fails, expected CSV, blocks us, log attached'], { keptRatio: 0.2 }).missing,
    ).toEqual(['privacy_scope']);
  });

  it('reads a template section as empty when only a list marker, the next heading, a question or a no is under it', () => {
    const r = assess([
      '## Expected Behavior\n\n## Current Behavior\nthe sync button is not working\n## Steps to Reproduce\n1.\n2.\nScreenshots: no\nCrash log: where is it kept?',
    ]);
    expect(r.found.actual).toBeDefined();
    expect(r.found.expected).toBeUndefined();
    expect(r.found.evidence).toBeUndefined();
    expect(assess(['Expected behavior\n\nScreenshots attached']).found.expected).toBeUndefined();
    expect(assess(['Expected behavior\nthe card keeps its order']).found.expected).toBeDefined();
  });

  it('hears where it still works and what it did before a change, not help asked for or a moment it worked', () => {
    for (const text of [
      'the 3.2 build works great',
      'the nightly doesn’t crash',
      'I had reminders until I updated the app',
      'shouldn’t the list keep its order?',
    ])
      expect(assess([text]).found.expected).toBeDefined();
    for (const text of [
      'it crashes, what should I do?',
      'it did work for a moment, then froze',
      'it doesn’t work on any device',
    ])
      expect(assess([text]).found.expected).toBeUndefined();
  });

  it('hears the symptom in plain words and a condition said after it', () => {
    for (const text of [
      'sync not working',
      'still problem',
      'the player keeps playing',
      'download is abnormal',
    ])
      expect(assess([text]).found.actual).toBeDefined();
    expect(assess(['I am not using a password manager']).found.actual).toBeUndefined();
    expect(assess(['no sound, shows up when I lock the phone']).found.evidence).toBeDefined();
    expect(assess(['tried Chrome and Firefox, the page is blank in both']).found.evidence).toBeDefined();
  });

  it('reads logs named next to a no that is about something else, and not "log in" or a question about logs', () => {
    expect(assess(['crashes with no errors?? log: https://paste.example/abc']).found.evidence).toBeDefined();
    expect(assess(['I log in and it says wrong password']).found.evidence).toBeUndefined();
    expect(assess(['it crashes, any way I can send you logs?']).found.evidence).toBeUndefined();
    expect(assess(['Screenshots: don’t think they help']).found.evidence).toBeUndefined();
  });

  it('names an environment from what the reporter runs or a full version on screen, not an address', () => {
    expect(assess(['I’m using Yiistrap with it']).found.environment).toBeDefined();
    expect(assess(['the store says 2.5.1.1']).found.environment).toBeDefined();
    expect(assess(['failed login from IP 10.0.0.7']).found.environment).toBeUndefined();
  });

  it('takes a runtime, a container or a bare version after "on" as where it happens, not a size or a duration', () => {
    for (const text of [
      'runs in docker on a NAS',
      'still there on 4.12',
      'same with Java 17',
      'raspberry pi 4 here',
    ])
      expect(assess([text]).found.environment).toBeDefined();
    for (const text of ['it hangs for 2.5 seconds', 'the file grows to 1.5 GB'])
      expect(assess([text]).found.environment).toBeUndefined();
  });

  it('hears a wish, the usual behaviour and where it does not occur as what should happen', () => {
    for (const text of [
      'I’d expect the draft to survive a reload',
      'normally the sidebar remembers its width',
      'on my work laptop the bug does not occur',
      'the tablet app is fine',
      'this never happened before the redesign',
    ])
      expect(assess([text]).found.expected).toBeDefined();
    for (const text of ['it doesn’t happen anymore', 'should I reinstall?'])
      expect(assess([text]).found.expected).toBeUndefined();
  });

  it('hears what the reporter sees or what the app says, and a state that persists', () => {
    for (const text of [
      'I only see last week’s invoices',
      'it says the token expired',
      'the preview stays black',
      'the reminders don’t go off',
      'the spinner spins forever',
    ])
      expect(assess([text]).found.actual).toBeDefined();
    for (const text of ['I don’t know which build this is', 'getting this too'])
      expect(assess([text]).found.actual).toBeUndefined();
  });

  it('reads pasted output, links to pastes or screenshots, and an action with its effect as evidence', () => {
    for (const text of [
      '```\nTraceback: nothing useful\nexit status 3\n```',
      '2024-03-02 10:14:07 WARN queue full, dropping message',
      'https://pastebin.com/xYz123',
      'https://i.imgur.com/abc.png',
      'I raised the timeout to 60s but it still gives up',
      'Clearing the cache made no difference.',
      'with the proxy disabled, it loads at once',
      'after rebuilding the index the problem does not come back', // no "occur": a step and its effect
    ])
      expect(assess([text]).found.evidence).toBeDefined();
    // A link to a paste is not the page where it happens.
    expect(assess(['https://pastebin.com/xYz123']).found.environment).toBeUndefined();
  });

  it('takes news of a fix as nothing supplied: neither what should happen nor a clue', () => {
    for (const text of [
      'both devices start fine now',
      'reinstalled, that cleared it up',
      'thanks, works great now',
    ]) {
      const r = assess([text]);
      expect(r.found.expected).toBeUndefined();
      expect(r.found.evidence).toBeUndefined();
    }
  });

  it('does not read "same problem" or a firewall blocking a port as impact', () => {
    expect(assess(['same problem on my phone']).found.impact).toBeUndefined();
    expect(assess(['the port was blocked by the firewall']).found.impact).toBeUndefined();
    expect(assess(['we use the web version instead for now']).found.impact).toBeDefined();
  });

  it('takes a time zone or the graphics and processor it runs on as where it happens, and a date not as a version', () => {
    for (const text of [
      'our office is on GMT+1',
      'TZ is America/Chicago',
      'RTX 3070 here',
      'a 2070 super',
      'Ryzen 5 box',
    ])
      expect(assess([text]).found.environment).toBeDefined();
    expect(assess(['it broke on 14.3.2022']).found.environment).toBeUndefined();
  });

  it('hears that it works elsewhere or does the right thing somewhere as what should happen, not that something fails to show', () => {
    for (const text of [
      'I can sign in from the web version without trouble',
      'the mobile app shows the right balance',
      'with the old installer, printing works.',
      'emails send just fine from the desktop client',
    ])
      expect(assess([text]).found.expected).toBeDefined();
    for (const text of ['the printer doesn’t show up', 'it doesn’t work.', 'none of them worked.'])
      expect(assess([text]).found.expected).toBeUndefined();
  });

  it('hears a lost connection, missing sound and a measured wait as what happens', () => {
    for (const text of [
      'the headset disconnects every few minutes',
      'no audio in calls',
      'the report takes 40 seconds',
    ])
      expect(assess([text]).found.actual).toBeDefined();
  });

  it('reads a condition with its symptom and an action with its result as evidence, whatever the wording', () => {
    for (const text of [
      'whenever I switch tabs, the video freezes',
      'I also flashed the older firmware: still no picture',
      'same result with a different cable',
    ])
      expect(assess([text]).found.evidence).toBeDefined();
  });

  it('hears work done by hand and data lost for good as impact', () => {
    expect(assess(['I have to re-enter the filter by hand']).found.impact).toBeDefined();
    expect(assess(['the drafts are gone for good']).found.impact).toBeDefined();
    expect(assess(['I lost two weeks of notes']).found.impact).toBeDefined();
  });

  it('takes a short reply of a model code or a version, a desktop, a package or a release channel as where it happens', () => {
    for (const text of [
      's22u',
      '2.6',
      'Moto G7',
      'KDE on Wayland',
      'it’s the flatpak',
      'on the beta channel',
    ])
      expect(assess([text]).found.environment).toBeDefined();
    for (const text of ['it took 3 tries', 'error E1234', 'is it fixed in the beta build?', 'thanks 2 you'])
      expect(assess([text]).found.environment).toBeUndefined();
  });

  it('hears a wish for how it should be and anything that ran fine, but not a missing error message', () => {
    expect(assess(['I want the list to stay sorted']).found.expected).toBeDefined();
    expect(assess(['the export ran fine last week']).found.expected).toBeDefined();
    expect(assess(['there is no error message at all']).found.expected).toBeUndefined();
  });

  it('hears a machine working too hard, data wiped or gone and a symptom that is still there as what happens', () => {
    for (const text of [
      'CPU usage sits at 90% when idle',
      'the laptop heats up',
      'it wiped my settings',
      'the draft is gone after a reload',
      'memory is still high after closing it',
    ])
      expect(assess([text]).found.actual).toBeDefined();
    expect(assess(['the problem is gone']).found.actual).toBeUndefined();
  });

  it('reads a diagnostic tool, a symptom whatever was tried and what it took to make it work as evidence', () => {
    for (const text of [
      'htop shows the worker near the top',
      'it fails whatever codec I choose',
      'I had to clear the cookies before the page started loading',
    ])
      expect(assess([text]).found.evidence).toBeDefined();
  });

  it('takes who it affects from a statement, not from a question or a one-off fix', () => {
    expect(assess(['only me, my colleagues are fine']).found.impact).toBeDefined();
    expect(assess(['it deleted all my photos']).found.impact).toBeDefined();
    // Someone else close by has it too: that is who it affects.
    expect(assess(['not only me, my wife too']).found.impact).toBeDefined();
    expect(assess(['not only on my phone']).found.impact).toBeUndefined();
    expect(assess(['doesn’t this break it for every user?']).found.impact).toBeUndefined();
    expect(assess(['I had to fix the encoding by hand once']).found.impact).toBeUndefined();
  });

  it('hears how many it hits, what it costs, how bad it is and the workaround in use as impact', () => {
    for (const text of [
      'it affects about 200 people in our office',
      'our entire support team runs into it',
      'this is costing us orders',
      'a showstopper for us',
      'only cosmetic, low priority',
      'I print from the desktop app for now',
      'I can’t do my job today',
    ])
      expect(assess([text]).found.impact).toBeDefined();
    for (const text of [
      'I have 9 accounts in the app',
      'it played music in front of my whole class',
      'thanks for now',
    ])
      expect(assess([text]).found.impact).toBeUndefined();
  });

  it('hears what it did before or in another version and what the reporter assumed as what should happen', () => {
    for (const text of [
      'before the update it kept my place',
      'the old app kept the draft',
      'in 2.3 it kept the draft',
      'the draft was always kept',
      'I thought it would keep the draft',
      'the correct total would be 12.90',
    ])
      expect(assess([text]).found.expected).toBeDefined();
    expect(assess(['the previous version was much better']).found.expected).toBeUndefined();
  });

  it('hears flashing, tiny, scrolling back, going negative and being logged out as what happens', () => {
    for (const text of [
      'the tab title flashes',
      'icons are tiny',
      'the page scrolls back to the top',
      'the counter goes negative',
      'I’m logged out every hour',
    ])
      expect(assess([text]).found.actual).toBeDefined();
  });

  it('reads a reproduction, a bisection, an only-when condition and attached or pasted output as evidence, not a failed reproduction', () => {
    for (const text of [
      'I reproduced it on two machines',
      'bisected it to the 4.2 merge',
      'it only happens with more than 100 items',
      'pasted the output below',
      'attached the har',
    ])
      expect(assess([text]).found.evidence).toBeDefined();
    expect(assess(['I can’t reproduce it anymore']).found.evidence).toBeUndefined();
    expect(assess(['it crashes just after opening the tab']).found.evidence).toBeUndefined();
  });

  it('reads two conditions set against each other as evidence, not a list of places', () => {
    for (const text of [
      'with Chrome it loads, with Firefox it hangs',
      'over wifi the upload finishes; over mobile data it stalls',
      'on my desktop it works, but on the laptop it doesn’t',
    ])
      expect(assess([text]).found.evidence).toBeDefined();
    expect(assess(['in the settings, in the menu']).found.evidence).toBeUndefined();
  });

  it('hears what never happens, what is only partly there and what works elsewhere, but not what fails to work well', () => {
    expect(assess(['the sync never finishes']).found.actual).toBeDefined();
    expect(assess(['not all the photos are uploaded']).found.actual).toBeDefined();
    expect(assess(['none of the shortcuts work']).found.actual).toBeDefined();
    expect(assess(['over a cable it works']).found.expected).toBeDefined();
    expect(assess(['both printers worked last month']).found.expected).toBeDefined();
    expect(assess(['reminders don’t show up reliably']).found.expected).toBeUndefined();
  });

  it('reads a link to a file-sharing host as evidence, not as the affected page', () => {
    const r = assess(['https://www.mediafire.com/file/abc123/crash.zip']);
    expect(r.found.evidence).toBeDefined();
    expect(r.found.environment).toBeUndefined();
  });

  it('reads a described workaround, a timing, a reproduction elsewhere and a contrast around "but" as evidence', () => {
    for (const text of [
      'workaround: turn sync off and on again',
      'it only starts after a while',
      'it also happens with the older adapter',
      'I can confirm this on the tablet',
      'it doesn’t fill the form on the main domain, but it does on subdomains',
      'photos appear once, but videos appear twice',
    ])
      expect(assess([text]).found.evidence).toBeDefined();
  });

  it('hears a wish, another app getting it right and a burden whenever it happens', () => {
    expect(assess(['I would love to have two-way sync without this']).found.expected).toBeDefined();
    expect(assess(['Etar shows them once']).found.expected).toBeDefined();
    expect(assess(['the stock calendar shows each event once']).found.expected).toBeDefined();
    expect(assess(['whenever it happens I have to kill the browser']).found.impact).toBeDefined();
    expect(assess(['not a big issue']).found.impact).toBeDefined();
    expect(assess(['it was easy enough to undo']).found.impact).toBeDefined();
  });

  it('reads short, misspelt and non-native forms of the fields', () => {
    for (const text of ['v.2.1', 'andriod 12', 'FF 115', 'on my mac', 'synology nas', 'proxmox vm'])
      expect(assess([text]).found.environment).toBeDefined();
    for (const text of ['the app is closing alone', 'it close when i click', 'not open anymore'])
      expect(assess([text]).found.actual).toBeDefined();
    for (const text of [
      'i excpected the list',
      'it must show the list',
      'normaly it show the list',
      'in old version it work',
    ])
      expect(assess([text]).found.expected).toBeDefined();
    expect(assess(['before it crashes I see a flash']).found.expected).toBeUndefined();
    expect(assess(['I must say the app is great']).found.expected).toBeUndefined();
  });

  it('takes a fix after an action or a fix that stuck as news, but not a fix that lasted a while', () => {
    const fixed = assess(['after updating the driver it works perfectly.']).found;
    expect(fixed.expected).toBeUndefined();
    expect(fixed.evidence).toBeUndefined();
    expect(assess(['Reinstalling from the old image fixed this one']).found.evidence).toBeUndefined();
    expect(assess(['Reinstalling didn’t fix it']).found.evidence).toBeDefined();
    expect(
      assess(['after restarting it works fine for a while, then it freezes again']).found.evidence,
    ).toBeDefined();
  });

  it('hears what should happen in a statement or a heading, not in a question back', () => {
    expect(assess(['whats the right version of the driver i need?']).found.expected).toBeUndefined();
    expect(assess(['Shouldn’t there be some feedback when sync fails?']).found.expected).toBeUndefined();
    expect(assess(['Shouldn’t it behave the same on all my phones?']).found.expected).toBeDefined();
    expect(assess(['What do we expect?\nThe text fits inside the button.']).found.expected).toBe(
      'an "Expected" section',
    );
  });

  it('hears frustration, resignation, a burden to use, others hit, how often and the way round it for now as impact', () => {
    for (const text of [
      'crashing every game got me fed up',
      'typing the kanji by hand is a nightmare',
      'I’ll probably have to turn it back on and live with missed texts',
      'it’s awkward to hold because of the buttons',
      'a colleague has the same with a different tool',
      'saw 2 forum posts with the same problem',
      'it happens about 10 times a day',
      'For now you need the context menu to copy.',
    ])
      expect(assess([text]).found.impact).toBeDefined();
    for (const text of [
      'I’m not fed up yet',
      'I live with my parents and we share the router',
      'hard to tell what causes it',
      'I tried it 3 times',
      'that’s all for now, you can close it',
      'not even the Firefox workaround helps this time',
      'it happens with all of these books',
    ])
      expect(assess([text]).found.impact).toBeUndefined();
  });

  it('reads an action with what it does, the result before what else was tried, steps in the past tense and how far it reaches as evidence', () => {
    for (const text of [
      'Right-clicking in the field doesn’t bring up the menu',
      'the list shows twice, and opening one from the tray goes to the last screen',
      'Cmd-V doesn’t work (also tried Ctrl-V)',
      'Uninstalled, installed 52.0, then updated to 52.1',
      'It’s not specific to the kanji',
      'They don’t work in the open dialog either',
    ])
      expect(assess([text]).found.evidence).toBeDefined();
    for (const text of [
      'Nothing goes to the server',
      'it doesn’t work. Have you tried restarting?',
      'Installed 52.1 yesterday.',
      'nothing specific to report',
      'I don’t know either',
    ])
      expect(assess([text]).found.evidence).toBeUndefined();
  });

  it('takes a phone maker’s Android skin or a custom system as where it happens, not "one UI element"', () => {
    for (const text of ['MIUI’s power saving closed the app', 'Galaxy S21 on One UI 6.1', 'LineageOS 21'])
      expect(assess([text]).found.environment).toBeDefined();
    expect(assess(['only one UI element is hidden']).found.environment).toBeUndefined();
  });

  it('hears working every time, a version that ran and a wish for how it could be, not a symptom every time or a wish to know', () => {
    for (const text of [
      'On my iPhone DNS works every time I connect',
      'Uninstalled, installed 52.0, which ran',
      'It would be really useful (for me anyway) if the shortcuts worked',
    ])
      expect(assess([text]).found.expected).toBeDefined();
    for (const text of [
      'the settings window opens every time the app launches',
      'installed 52.1, which crashed',
      'it would be good to know why',
      'I’d like to know how to switch to another repository',
    ])
      expect(assess([text]).found.expected).toBeUndefined();
  });

  it('hears an exception thrown as what happens and a pasted module list as evidence', () => {
    expect(assess(['An unhandled exception occurred while exporting']).found.actual).toBeDefined();
    expect(assess(['no exceptions in there']).found.actual).toBeUndefined();
    expect(
      assess(['libimage.dll\nlibhistory.dll\nNinput.dll 10.0.19041.546\n']).found.evidence,
    ).toBeDefined();
    expect(assess(['the installer copies foo.dll']).found.evidence).toBeUndefined();
  });

  it('asks one question covering everything missing', () => {
    const q = clarificationQuestion('C1', ['environment', 'impact']);
    expect(q).toMatch(/^Thanks — this is case C1\./);
    expect(q.match(/\?/g)).toHaveLength(1);
    expect(q).toContain('where it happens');
    expect(q).toContain('who is affected');
  });
});

describe('privacy scope', () => {
  it('removes marked private text and credentials from the brief and counts what it removed', () => {
    const s = privacyScope([
      {
        sourceId: 's1',
        text: 'Login fails with 401.\nCustomer: ACME Corp, contract 991\nmy token ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8',
      },
      { sourceId: 's2', text: 'also for jane.doe@example.com' },
    ]);
    expect(s.brief).toContain('Login fails with 401.');
    expect(s.brief).not.toMatch(/ACME|ghp_|jane\.doe/);
    expect(s.categories).toEqual(expect.arrayContaining(['private_context', 'email']));
    expect(s.redactions).toBeGreaterThanOrEqual(3);
    expect(s.keptRatio).toBeLessThan(1);
    expect(s.brief).toMatch(/^Report:\n[\s\S]*Follow-up 1:\n/);
  });

  it('titles a case from its first readable line, not a stack frame', () => {
    expect(caseTitle('    at foo (a.js:1:2)\nCheckout is blank')).toBe('Checkout is blank');
    expect(caseTitle('x'.repeat(300))).toHaveLength(118);
  });

  it('gives a redacted copy (as intake records it) the privacy scope of its raw text', () => {
    const raw = [
      {
        sourceId: 's1',
        text: 'Login fails with 401.\nKey AKIAIOSFODNN7EXAMPLE and ghp_R4nd0mL00kingT0k3nV4lu3F0rT3st1ng9Qz\nCustomer: ACME GmbH, account 991',
      },
      { sourceId: 's2', text: 'Same here, mail me at bob@example.org' },
    ];
    const redacted = raw.map((s) => ({
      sourceId: s.sourceId,
      text: sanitizeReport(s.text).brief,
      rawChars: visibleChars(s.text),
    }));
    expect(redacted[0]?.text).not.toContain('AKIA');
    const fromRaw = privacyScope(raw);
    expect(fromRaw.categories).toEqual(['aws_access_key_id', 'email', 'github_token', 'private_context']);
    expect(privacyScope(redacted)).toEqual(fromRaw);
  });
});
