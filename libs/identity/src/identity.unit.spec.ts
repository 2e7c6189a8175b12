import { loadEvalSet } from '../eval/evaluate';
import { evaluateIdentity } from './evaluation';
import { identityConfig } from './identity.config';
import { corroborated, IdentityIndex } from './identity-index';
import { extractSignatures } from './signatures';
import { stem, tokenize } from './text';
import type { Features } from './identity-index';

describe('signatures', () => {
  it('extracts codes, statuses, exceptions, frames, versions, areas, urls and quotes', () => {
    const s = extractSignatures(
      [
        'After upgrading to v4.3.1 checkout fails with ECONNRESET and E1042, server says 502 Bad Gateway.',
        "Uncaught TypeError: Cannot read properties of undefined (reading 'price')",
        '    at CartSummary.render (src/CartSummary.tsx:88:31)',
        'Traceback (most recent call last):',
        '  File "/srv/app/tandem/client.py", line 212, in list_tasks',
        'KeyError: cursor. See https://app.example.com/projects/123456/board and /api/v2/tasks/991/position',
      ].join('\n'),
    );
    expect([...s.error_code]).toEqual(expect.arrayContaining(['ECONNRESET', 'E1042']));
    expect([...s.http_status]).toContain('502');
    expect([...s.exception]).toEqual(expect.arrayContaining(['TypeError', 'KeyError']));
    expect([...s.frame]).toEqual(
      expect.arrayContaining(['cartsummary.render@cartsummary.tsx', 'list_tasks@client.py']),
    );
    expect([...s.version]).toEqual(['4.3']);
    expect([...s.area]).toContain('checkout');
    expect([...s.url]).toEqual(['app.example.com/projects/:id/board']);
    expect([...s.path]).toContain('/api/v2/tasks/:id/position');
    expect(s.quoted.size).toBeGreaterThan(0);
  });

  it('does not read dependency pins or environment versions as the product version', () => {
    expect([
      ...extractSignatures(
        'pnpm 11.1.2, node v24.15.0: brace-expansion@5.0.9 and minimatch@10.2.6 duplicated',
      ).version,
    ]).toEqual(['11.1']);
    expect([
      ...extractSignatures('Code 1.76.2 on an M1 Max (Darwin arm64 22.3.0), Firefox 115.0.2').version,
    ]).toEqual(['1.76']);
  });

  it('does not read prose numbers or IP addresses as versions', () => {
    expect([...extractSignatures('it took 2.5 seconds to load 3 items from 10.0.0.12').version]).toEqual([]);
    expect([...extractSignatures('broken since version 4.2, fine on 4.1.9').version].sort()).toEqual([
      '4.1',
      '4.2',
    ]);
  });
});

describe('text', () => {
  it('folds tenses, plurals and symptom synonyms', () => {
    expect(stem('crashing')).toBe('crash');
    expect(stem('stopped')).toBe('stop');
    expect(tokenize('The app hangs and is unresponsive')).toEqual(['app', 'freeze', 'freeze']);
    expect(tokenize('Sign-in keeps crashing')).toEqual(['login', 'in', 'crash'].filter((t) => t !== 'in'));
  });
});

describe('IdentityIndex', () => {
  const index = (): IdentityIndex => {
    const i = new IdentityIndex(identityConfig());
    i.add(
      'C-upload',
      's1',
      'Uploading any file larger than ~25 MB fails with 413 Payload Too Large. Smaller files go through fine.',
    );
    i.add('C-android', 's2', 'Since 4.3 on Android I get every push notification twice. Pixel 7, Android 14');
    i.add(
      'C-export',
      's3',
      'Exported CSV shows garbled characters in Excel: Müller becomes MÃ¼ller, umlauts all broken',
    );
    i.add(
      'C-keytar',
      's4',
      "Desktop app crashes on startup after updating to 4.3.0 on Windows 11. Uncaught Exception: Error: Cannot find module 'keytar'",
    );
    return i;
  };

  it('links the same symptom in other words, with the signals that matched', () => {
    const d = index().decide({ text: 'anyone else getting double notifs on android? started with v4.3.0' });
    expect(d.decision).not.toBe('new');
    expect(d.matchedWith).toBe('C-android');
    expect(d.reasons.join('\n')).toMatch(/shared version: 4\.3/);
  });

  it('links a report sharing the technical signature even with little shared prose', () => {
    const d = index().decide({
      text: 'attachments over 25mb fail to upload (413). this blocks us from sharing design files',
    });
    expect(d.decision).not.toBe('new');
    expect(d.matchedWith).toBe('C-upload');
    expect(d.reasons.join('\n')).toMatch(/shared http status: 413/);
  });

  it('keeps same words with a different cause apart: another status code', () => {
    const d = index().decide({
      text: 'Uploading any file larger than 5 MB fails with 504 Gateway Timeout on slow connections.',
    });
    expect(d.decision).not.toBe('link');
    expect(d.reasons.join('\n')).toMatch(/conflicting http status: 504 vs 413/);
  });

  it('keeps same words with a different cause apart: another version and platform', () => {
    const same = index().decide({ text: 'Since 4.3 on Android I get every push notification twice.' });
    const other = index().decide({ text: 'Since 3.9 on iOS I get every push notification twice.' });
    expect(same.decision).toBe('link');
    expect(other.confidence).toBeLessThan(same.confidence - 0.2);
    expect(other.reasons.join('\n')).toMatch(/conflicting version: 3\.9 vs 4\.3/);
  });

  it('answers new on an empty index and forgets removed cases', () => {
    expect(new IdentityIndex().decide({ text: 'anything at all' })).toMatchObject({
      decision: 'new',
      matchedWith: null,
    });
    const i = index();
    i.remove('C-upload');
    expect(
      i.decide({ text: 'upload fails with 413 Payload Too Large for files over 25 MB' }).matchedWith,
    ).not.toBe('C-upload');
    expect(i.size).toBe(3);
  });

  it('never copies the reporter’s quoted text, urls or paths into reasons', () => {
    const i = new IdentityIndex();
    i.add(
      'C1',
      's1',
      'Login fails: "secret customer acme-corp token rejected" at https://acme.example.com/a/b',
    );
    const d = i.decide({
      text: 'Login fails: "secret customer acme-corp token rejected" at https://acme.example.com/a/b',
    });
    expect(d.reasons.join('\n')).not.toMatch(/acme/);
  });

  it('uses an embedding when both sides carry one', () => {
    const i = new IdentityIndex();
    i.add('C1', 's1', 'the dashboard widgets are empty', [1, 0, 0]);
    const near = i.decide({ text: 'graphs not shown', embedding: [0.99, 0.1, 0] });
    const far = i.decide({ text: 'graphs not shown', embedding: [0, 0, 1] });
    expect(near.confidence).toBeGreaterThan(far.confidence);
    expect(near.reasons.join('\n')).toMatch(/embedding similarity/);
  });

  it('does not let a shared release and boilerplate carry a clearly different report', () => {
    const i = new IdentityIndex();
    const at = Date.UTC(2026, 10, 29);
    i.add(
      'search',
      's1',
      'Search returns no results for words with accents: searching "Zürich" finds nothing. Expected the Zürich office tasks. Web app in Chrome 120, version 4.3.0. Blocks our support team; screenshot attached.',
      null,
      at,
    );
    const crash = i.decide({
      text: 'Since updating to 4.3.0 the Windows desktop app crashes on startup with "Uncaught Exception: Cannot find module keytar". Expected it to open as before. Our whole team is blocked. Screenshot attached.',
      at,
    });
    expect(crash.decision).toBe('new');
    expect(crash.reasons.join('\n')).toMatch(/same release: 4\.3\.0/);
    expect(crash.reasons.join('\n')).toMatch(/metadata weighed by corroboration/);
    // The same release beside prose that tells of the same thing still links.
    i.add(
      'crash',
      's2',
      'Since updating to 4.3.0 the Windows desktop app crashes on startup with "Uncaught Exception: Cannot find module keytar". Expected it to open as before.',
      null,
      at,
    );
    const again = i.decide({
      text: 'Same crash here, Windows 11 desktop app 4.3.0: Cannot find module keytar on startup. Blocks our team too, screenshot attached.',
      at,
    });
    expect(again).toMatchObject({ decision: 'link', matchedWith: 'crash' });
  });

  it('counts recency only by how much a case stands out, and never to make a link', () => {
    const day = 86_400_000;
    const at = Date.UTC(2026, 10, 29);
    const text = (i: number): string => `Widget ${i} on the board view shows stale numbers after a refresh`;
    const quiet = new IdentityIndex();
    quiet.add('recent', 's0', text(0), null, at - day);
    for (let i = 1; i < 6; i++)
      quiet.add(`old${i}`, `s${i}`, `Unrelated report ${i} about exports`, null, at - 300 * day);
    const busy = new IdentityIndex();
    busy.add('recent', 's0', text(0), null, at - day);
    for (let i = 1; i < 6; i++)
      busy.add(`other${i}`, `s${i}`, `Unrelated report ${i} about exports`, null, at - day);
    const q = { text: 'the board widget numbers are stale until I refresh', at };
    const inQuiet = quiet.candidates(q, 1)[0];
    const inBusy = busy.candidates(q, 1)[0];
    expect(inQuiet?.caseId).toBe('recent');
    expect(inQuiet?.features.recency).toBeGreaterThan(0.5);
    expect(inBusy?.features.recency).toBeLessThan(0.2);
    // However recent, a link stands on text and signatures alone: with the link threshold between
    // the report's confidence without time and with it, it is held for review, not linked.
    const timed = quiet.decide(q).confidence;
    const untimed = quiet.decide({ text: q.text }).confidence;
    expect(timed).toBeGreaterThan(untimed);
    const strict = new IdentityIndex(
      identityConfig({ linkThreshold: (timed + untimed) / 2, reviewThreshold: Math.min(0.1, untimed) }),
    );
    strict.add('recent', 's0', text(0), null, at - day);
    for (let i = 1; i < 6; i++)
      strict.add(`old${i}`, `s${i}`, `Unrelated report ${i} about exports`, null, at - 300 * day);
    expect(strict.decide(q)).toMatchObject({ decision: 'review', matchedWith: 'recent' });
  });

  it('links on prose alone only when one case clearly stands out; otherwise holds it for review', () => {
    // A low link threshold, so only the gate stands between these scores and a link.
    const cfg = identityConfig({ linkThreshold: 0.3, reviewThreshold: 0.1 });
    const alike = new IdentityIndex(cfg);
    alike.add('A', 's1', 'The sidebar collapses by itself every few minutes while typing a long comment');
    alike.add('B', 's2', 'The sidebar collapses by itself every few minutes while dragging a card');
    const q = { text: 'sidebar keeps collapsing by itself every few minutes' };
    const held = alike.decide(q);
    expect(held.decision).toBe('review');
    expect(held.reasons.join('\n')).toMatch(/held for review: no shared signature, status or release/);
    const alone = new IdentityIndex(cfg);
    alone.add('A', 's1', 'The sidebar collapses by itself every few minutes while typing a long comment');
    alone.add('B', 's2', 'Exported invoices are missing the tax line since the last release');
    expect(alone.decide(q)).toMatchObject({ decision: 'link', matchedWith: 'A' });
    expect(alone.candidates(q, 1)[0]?.margin).toBeGreaterThan(0.2);
    // With the gate at 1 a link always needs a shared signature, release, version, area or status.
    const strict = new IdentityIndex(identityConfig({ ...cfg, linkGate: { margin: 1 } }));
    strict.add('A', 's1', 'The sidebar collapses by itself every few minutes while typing a long comment');
    strict.add('B', 's2', 'Exported invoices are missing the tax line since the last release');
    expect(strict.decide(q).decision).toBe('review');
  });

  it('counts a shared signature, status or release, or a clear lead in text as the link gate’s second signal', () => {
    const i = new IdentityIndex();
    i.add('A', 's1', 'The sidebar collapses by itself');
    const none = { ...(i.candidates({ text: 'sidebar collapses' }, 1)[0]?.features as Features) };
    expect(corroborated(none, 0.1, 0.2)).toBe(false);
    expect(corroborated(none, 0.25, 0.2)).toBe(true);
    for (const k of ['strong', 'release', 'statusShared'] as const)
      expect(corroborated({ ...none, [k]: 0.5 }, 0, 0.2)).toBe(true);
    // Many bugs of one product share an area (settings, sync), a major.minor version or a platform.
    for (const k of ['areaShared', 'versionShared', 'platformShared'] as const)
      expect(corroborated({ ...none, [k]: 1 }, 0, 0.2)).toBe(false);
  });

  it('refuses a review threshold above the link threshold', () => {
    expect(() => identityConfig({ linkThreshold: 0.3, reviewThreshold: 0.5 })).toThrow(/reviewThreshold/);
  });
});

describe('labelled evaluation set', () => {
  // A floor, not a target: a change that makes the matcher silently merge more, or surface
  // fewer duplicates, fails here. Current figures are printed by `npm run eval:identity`.
  it('keeps link precision and link|review recall above their floors', () => {
    const { reports, labels } = loadEvalSet();
    expect(reports.length).toBeGreaterThanOrEqual(150);
    expect(new Set(labels.values()).size).toBeGreaterThanOrEqual(40);
    const r = evaluateIdentity(reports, labels, identityConfig());
    expect(r.link.precision).toBeGreaterThanOrEqual(0.9);
    // 0.4 before an automatic link needed a second signal: a shared area or major.minor version alone
    // now holds the report for review (link precision 0.90 → 0.93, link|review recall unchanged).
    expect(r.link.recall).toBeGreaterThanOrEqual(0.35);
    expect(r.linkOrReview.recall).toBeGreaterThanOrEqual(0.8);
    // 0.8 before the defaults were fitted to real reports (eval/corpus): a little more review noise here
    // buys auto-link precision on reports not written like this set.
    expect(r.linkOrReview.precision).toBeGreaterThanOrEqual(0.75);
  });
});
