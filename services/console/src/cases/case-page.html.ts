import type { CaseStatus } from '@caseloop/case-model';
import { Html, html, markdown, safeUrl } from './html';
import type {
  CaseDetailView,
  CheckProgressLine,
  ChecksProgressView,
  CaseListView,
  Claim,
  DeliveryState,
  EvidenceItem,
  OpsFindingsView,
  ReceiptView,
  SourceThread,
  TimelineEntry,
  WaitingItem,
} from './case-page.view';

/** Server-rendered pages: no script at all; the stylesheet is served by the page's own listener. */

export interface WaitingView {
  kind: 'waiting';
  generatedAt: string;
  items: WaitingItem[];
}

const when = (iso: string): string => iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC');

export function duration(minutes: number): string {
  if (minutes < 1) return 'just now';
  if (minutes < 60) return `${minutes} min`;
  if (minutes < 48 * 60) return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
  return `${Math.floor(minutes / 1440)} d`;
}

const shortRev = (rev: string | null): Html =>
  rev ? html`<code title="${rev}">${rev.slice(0, 10)}</code>` : html`<span class="muted">—</span>`;

const STATUS_TONE: Record<CaseStatus, string> = {
  received: 'info',
  triage: 'info',
  feedback: 'neutral',
  needs_info: 'warn',
  actionable: 'info',
  in_progress: 'info',
  validating: 'info',
  pr_ready: 'good',
  implemented_client_blocked: 'warn',
  blocked: 'bad',
  awaiting_review: 'attention',
  approved: 'good',
  revision_requested: 'warn',
  rejected: 'bad',
  duplicate: 'neutral',
  stale: 'bad',
};

export const statusBadge = (s: CaseStatus): Html =>
  html`<span class="badge ${STATUS_TONE[s]}" data-status="${s}">${s.replace(/_/g, ' ')}</span>`;

const DELIVERY_TONE: Record<DeliveryState | 'not_routed', string> = {
  confirmed: 'good',
  partly_confirmed: 'warn',
  intended: 'info',
  requested: 'neutral',
  refused: 'bad',
  not_routed: 'neutral',
};
const deliveryBadge = (s: DeliveryState | 'not_routed'): Html =>
  html`<span class="badge ${DELIVERY_TONE[s]}" data-delivery="${s}"
    >${s === 'confirmed' ? '✓ ' : s === 'refused' ? '✗ ' : ''}${s.replace(/_/g, ' ')}</span
  >`;

/** Who is signed in (shown with a sign-out form); absent when the console runs without sign-in. */
export interface PageViewer {
  signedInAs?: string;
}

function layout(opts: {
  title: string;
  active: 'cases' | 'waiting' | 'findings' | 'case';
  body: Html;
  refreshSeconds?: number;
  waiting?: number;
  opsFindings?: number;
  signedInAs?: string | undefined;
}): Html {
  const findingsCount = opts.opsFindings ? html` <span class="count warn">${opts.opsFindings}</span>` : '';
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        ${opts.refreshSeconds ? html`<meta http-equiv="refresh" content="${opts.refreshSeconds}" />` : ''}
        <title>${opts.title} · caseloop</title>
        <link rel="stylesheet" href="/case-page.css" />
      </head>
      <body>
        <header class="top">
          <a class="brand" href="/cases">caseloop</a>
          <nav>
            <a href="/cases" class="${opts.active === 'cases' ? 'on' : ''}">Cases</a>
            <a href="/waiting" class="${opts.active === 'waiting' ? 'on' : ''}"
              >Waiting for a human${opts.waiting ? html` <span class="count">${opts.waiting}</span>` : ''}</a
            >
            <a href="/findings" class="${opts.active === 'findings' ? 'on' : ''}"
              >Ops findings${findingsCount}</a
            >
          </nav>
          <span class="note">read-only · from the ledger projections</span>
          ${
            opts.signedInAs
              ? html`<form class="viewer" method="post" action="/auth/sign-out">
                  <span>${opts.signedInAs}</span> <button type="submit">Sign out</button>
                </form>`
              : ''
          }
        </header>
        <main>${opts.body}</main>
      </body>
    </html> `;
}

function ratioCard(
  label: string,
  r: { numerator: number; denominator: number; ratio: number | null },
  unit: string,
  explain: string,
): Html {
  return html`<div class="card" data-measure="${label}">
    <div class="label">${label}</div>
    <div class="value">${r.ratio === null ? 'n/a' : `${(r.ratio * 100).toFixed(1)}%`}</div>
    <div class="denom"><b>${r.numerator}</b> ${unit} / <b>${r.denominator}</b> ${explain}</div>
  </div>`;
}

export function casesPage(v: CaseListView, opts: { refreshSeconds: number } & PageViewer): Html {
  const st = v.stats;
  const d = st.duplicatePrevention;
  const c = st.cycleTime;
  const total = Object.values(v.counts).reduce((a, b) => a + (b ?? 0), 0);
  const live = Object.entries(v.counts)
    .filter(([s]) => !['approved', 'rejected', 'duplicate'].includes(s))
    .reduce((a, [, n]) => a + (n ?? 0), 0);
  const chip = (value: string, label: string, n: number, on: boolean): Html =>
    html`<a class="chip ${on ? 'on' : ''}" href="/cases${value === 'all' ? '' : `?status=${value}`}"
      >${label} <span>${n}</span></a
    >`;
  const body = html` <section class="measures" aria-label="trust measures">
      ${ratioCard('duplicate prevention', d, 'linked', `reports (${d.opened} opened, ${d.linked} linked, ${d.held} held)`)}
      ${ratioCard('stale-proof rejections', st.staleProofRejections, 'stale', 'passing check runs')}
      ${ratioCard('receipt completeness', st.receiptCompleteness, 'confirmed at every source', 'receipts routed')}
      <div class="card" data-measure="cycle time">
        <div class="label">cycle time (verified completions)</div>
        <div class="value">${c.p50Minutes === null ? 'n/a' : `${c.p50Minutes} min`}</div>
        <div class="denom">
          p50 over <b>${c.verifiedCompletions}</b> verified
          completion(s)${c.p90Minutes === null ? '' : html` · p90 ${c.p90Minutes} min · mean ${c.meanMinutes} min`}
        </div>
      </div>
      <div class="card" data-measure="improvement candidates">
        <div class="label">improvement candidates</div>
        <div class="value">${st.improvementCandidates}</div>
        <div class="denom">from <b>${st.eventsRead}</b> ledger events (whole ledger)</div>
      </div>
    </section>
    <section>
      <div class="bar">
        <h1>Cases</h1>
        <nav class="chips" aria-label="filter by status">
          ${chip('all', 'all', total, v.filter.status === null)}
          ${chip('live', 'live', live, v.filter.status === 'live')}
          ${v.statuses.filter((s) => (v.counts[s] ?? 0) > 0 || v.filter.status === s).map((s) => chip(s, s.replace(/_/g, ' '), v.counts[s] ?? 0, v.filter.status === s))}
        </nav>
      </div>
      ${
        v.cases.length === 0
          ? html`<p class="empty">
              No cases${v.filter.status ? html` with status <b>${v.filter.status}</b>` : ''} yet.
            </p>`
          : html`<table class="cases">
              <thead>
                <tr>
                  <th>case</th>
                  <th>title</th>
                  <th>status</th>
                  <th>classification</th>
                  <th class="num">sources</th>
                  <th>task</th>
                  <th>revision</th>
                  <th>age</th>
                  <th>last event</th>
                </tr>
              </thead>
              <tbody>
                ${v.cases.map(
                  (r) =>
                    html`<tr class="${r.live ? 'live' : 'settled'}" data-case="${r.caseId}">
                      <td>
                        <a href="/cases/${encodeURIComponent(r.caseId)}"><code>${r.caseId}</code></a>
                      </td>
                      <td class="title">${r.title}</td>
                      <td>${statusBadge(r.status)}</td>
                      <td>${r.classification ?? html`<span class="muted">—</span>`}</td>
                      <td class="num">${r.sources}</td>
                      <td>
                        ${r.taskId ? html`<code>${r.taskId}</code>` : html`<span class="muted">—</span>`}
                      </td>
                      <td>${shortRev(r.revision)}</td>
                      <td title="opened ${when(r.openedAt)}">${duration(r.ageMinutes)}</td>
                      <td>
                        <span class="evt">${r.lastEventType}</span>
                        <span class="muted">#${r.lastSeq} · ${duration(r.lastEventAgoMinutes)} ago</span>
                      </td>
                    </tr>`,
                )}
              </tbody>
            </table>`
      }
      <p class="foot muted">
        Generated
        ${when(v.generatedAt)}${opts.refreshSeconds ? ` · reloads every ${opts.refreshSeconds} s` : ''} ·
        <a href="/cases.json${v.filter.status ? `?status=${v.filter.status}` : ''}">JSON</a>
      </p>
    </section>`;
  return layout({
    title: 'Cases',
    active: 'cases',
    body,
    refreshSeconds: opts.refreshSeconds,
    waiting: v.waiting,
    opsFindings: v.opsFindings,
    signedInAs: opts.signedInAs,
  });
}

const claimLine = (c: Claim): Html =>
  html`<li class="claim ${c.ok ? 'ok' : 'no'}" data-claim="${c.name}" data-ok="${String(c.ok)}">
    <span class="mark">${c.ok ? '✓' : '✗'}</span><b>${c.name}</b><span class="detail">${c.detail}</span>
  </li>`;

function timelineRow(e: TimelineEntry): Html {
  return html`<tr class="tone-${e.tone}" data-seq="${e.seq}" data-type="${e.type}">
    <td class="num"><code>${e.seq}</code></td>
    <td class="time">${when(e.occurredAt)}</td>
    <td>
      <span class="producer p-${e.producer}">${e.producer}</span
      >${e.aggregate !== 'case' ? html`<span class="agg">${e.aggregate}</span>` : ''}
    </td>
    <td><span class="evt">${e.type}</span></td>
    <td>
      <div class="summary">${e.summary}</div>
      ${
        e.facts.length
          ? html`<dl class="facts">
              ${e.facts.map(
                (f) =>
                  html`<dt>${f.label}</dt>
                    <dd>${f.value}</dd>`,
              )}
            </dl>`
          : ''
      }
      ${
        e.reasons.length
          ? html`<ul class="reasons">
              ${e.reasons.map((r) => html`<li>${r}</li>`)}
            </ul>`
          : ''
      }
      ${
        e.claims
          ? html`<ul class="claims compact">
              ${e.claims.map(claimLine)}
            </ul>`
          : ''
      }
    </td>
  </tr>`;
}

function sourceCard(s: SourceThread): Html {
  return html`<div class="thread" data-source="${s.sourceId}">
    <div class="thread-head">
      <code>${s.sourceId}</code>
      <span class="muted"
        >via ${s.via} · reporter ${s.reporterId} · channel
        ${s.channelId}${s.threadId ? ` · thread ${s.threadId}` : ''}</span
      >
    </div>
    ${
      s.deliveries.length === 0
        ? html`<p class="muted">No deliveries to this thread yet.</p>`
        : html`<table class="deliveries">
            <thead>
              <tr>
                <th>post</th>
                <th>state</th>
                <th>chunks</th>
                <th>Discord message</th>
              </tr>
            </thead>
            <tbody>
              ${s.deliveries.map(
                (d) =>
                  html`<tr data-delivery-id="${d.deliveryId}" data-kind="${d.kind}">
                    <td>
                      <b>${d.kind}</b>${d.receiptId ? html` <span class="muted">${d.receiptId}</span>` : ''}
                    </td>
                    <td>
                      ${deliveryBadge(d.state)}${d.refusal ? html` <span class="muted">${d.refusal}</span>` : ''}
                    </td>
                    <td class="num">${d.chunks.confirmed}/${d.chunks.total ?? '?'}</td>
                    <td>
                      ${d.discordMessageIds.length ? d.discordMessageIds.map((m) => html`<code>${m}</code> `) : html`<span class="muted">—</span>`}
                    </td>
                  </tr>`,
              )}
            </tbody>
          </table>`
    }
  </div>`;
}

function evidenceCard(e: EvidenceItem): Html {
  const visual =
    e.thumbnail && e.url
      ? html`<a href="${safeUrl(e.url)}" rel="noreferrer noopener" target="_blank"
          ><img
            class="thumb"
            src="${safeUrl(e.url)}"
            alt="${e.kind} ${e.artifactId}"
            loading="lazy"
            referrerpolicy="no-referrer"
        /></a>`
      : html`<div class="thumb placeholder">
          ${e.kind}${e.shareable ? '' : html`<br /><small>${e.review === 'needs_human' ? 'awaiting privacy approval' : 'not shareable'}</small>`}
        </div>`;
  return html`<figure class="evidence" data-artifact="${e.artifactId}" data-sha256="${e.sha256}">
    ${visual}
    <figcaption>
      <div>
        <b>${e.kind}</b>
        ${e.url && !e.thumbnail ? html`<a href="${safeUrl(e.url)}" rel="noreferrer noopener">open</a>` : ''}
      </div>
      <div class="sha" title="sha-256">sha-256 <code>${e.sha256}</code></div>
      <dl class="tags">
        <dt>lease token</dt>
        <dd>${e.leaseToken ?? '—'}</dd>
        <dt>revision</dt>
        <dd>${shortRev(e.revision)}</dd>
        ${
          e.captureId
            ? html`<dt>capture</dt>
                <dd><code>${e.captureId}</code></dd>`
            : ''
        }
        ${
          e.step
            ? html`<dt>step</dt>
                <dd>${e.step}</dd>`
            : ''
        }
        <dt>review</dt>
        <dd>${e.review ?? '—'}</dd>
        <dt>size</dt>
        <dd>${e.bytes} B</dd>
      </dl>
    </figcaption>
  </figure>`;
}

function receiptBlock(r: ReceiptView): Html {
  return html`<article class="receipt" data-receipt="${r.receiptId}">
    <div class="receipt-head">
      <b>${r.receiptId}</b> · ${r.outcome.replace(/_/g, ' ')} · ${shortRev(r.revision)} · built
      ${when(r.builtAt)}
    </div>
    ${
      r.posted.length === 0
        ? html`<div class="receipt-note muted">Built; not routed to any thread yet.</div>
            <div class="rendered">${markdown(r.rendered)}</div>`
        : r.posted.map(
            (p) =>
              html`<div class="receipt-note muted">
                  As posted to ${p.sourceIds.map((id) => html`<code>${id}</code> `)}
                </div>
                <div class="rendered" data-posted="${p.sourceIds.join(' ')}">${markdown(p.content)}</div>`,
          )
    }
    <div class="receipt-threads">
      Confirmation per source thread:
      ${r.threads.map((t) => html`<span class="rt"><code>${t.sourceId}</code> ${deliveryBadge(t.state)}</span>`)}
    </div>
  </article>`;
}

const waitingRow = (w: WaitingItem, withCase: boolean): Html =>
  html`<tr data-waiting="${w.kind}">
    <td>
      <span class="badge ${w.kind === 'decision' ? 'attention' : 'warn'}">${w.kind.replace(/_/g, ' ')}</span>
    </td>
    ${
      withCase
        ? html`<td>
            <a href="/cases/${encodeURIComponent(w.caseId)}"><code>${w.caseId}</code></a>
            <div class="muted">${w.caseTitle}</div>
          </td>`
        : ''
    }
    <td>${w.detail}</td>
    <td class="time">${when(w.since)}</td>
  </tr>`;

const CHECK_BADGE: Record<CheckProgressLine['status'], string> = {
  running: 'info',
  passed: 'good',
  skipped: 'neutral',
  failed: 'bad',
  timeout: 'bad',
  error: 'warn',
};

function checksPanel(c: ChecksProgressView): Html {
  const done = c.lines.filter((l) => l.status !== 'running').length;
  return html`<section class="panel" id="checks" data-running="${c.running ? 'true' : 'false'}">
    <h2>
      Checks on ${shortRev(c.revision)}
      <span class="muted">${done}/${c.total} done${c.running ? ' · running, this page reloads' : ''}</span>
    </h2>
    <table class="checks">
      <tbody>
        ${c.lines.map(
          (l) =>
            html`<tr data-check="${l.name}" data-status="${l.status}">
              <td>${l.index + 1}/${c.total}</td>
              <td><code>${l.name}</code> <span class="muted">${l.kind}</span></td>
              <td><span class="badge ${CHECK_BADGE[l.status]}">${l.status}</span></td>
              <td>
                ${l.durationMs === null ? html`since ${when(l.startedAt)}` : `${(l.durationMs / 1000).toFixed(1)} s`}
              </td>
              <td>${l.tail.length ? html`<pre class="tail">${l.tail.join('\n')}</pre>` : ''}</td>
            </tr>`,
        )}
      </tbody>
    </table>
  </section>`;
}

export function casePage(v: CaseDetailView, opts: { refreshSeconds?: number } & PageViewer = {}): Html {
  const s = v.summary;
  const body = html` <p class="crumbs"><a href="/cases">← all cases</a></p>
    <section class="case-head">
      <h1><span class="title">${s.title}</span> ${statusBadge(s.status)}</h1>
      <dl class="meta">
        <dt>case</dt>
        <dd><code>${s.caseId}</code></dd>
        <dt>classification</dt>
        <dd>${s.classification ?? '—'}</dd>
        <dt>owner</dt>
        <dd>${s.owner ?? '—'}</dd>
        <dt>task</dt>
        <dd>${s.taskId ? html`<code>${s.taskId}</code>` : '—'}</dd>
        <dt>repository</dt>
        <dd>${s.repository ?? '—'}${s.targetBranch ? ` (${s.targetBranch})` : ''}</dd>
        <dt>revision</dt>
        <dd>${shortRev(s.revision)}</dd>
        <dt>target head</dt>
        <dd>${shortRev(s.targetHead)}</dd>
        <dt>branch</dt>
        <dd>${s.branch ? html`<code>${s.branch}</code>` : '—'}</dd>
        <dt>opened</dt>
        <dd>${when(s.openedAt)}</dd>
        <dt>last event</dt>
        <dd>#${s.lastSeq} · ${when(s.updatedAt)}</dd>
        ${
          s.privacyCategories.length
            ? html`<dt>private context</dt>
                <dd>${s.privacyCategories.join(', ')} (removed)</dd>`
            : ''
        }
        ${
          s.missing.length
            ? html`<dt>missing</dt>
                <dd>${s.missing.join(', ')}</dd>`
            : ''
        }
        ${
          s.decision
            ? html`<dt>decision</dt>
                <dd>${s.decision.kind} by ${s.decision.reviewerId}</dd>`
            : ''
        }
      </dl>
    </section>

    ${
      v.waiting.length
        ? html`<section class="panel attention">
            <h2>Waiting for a human</h2>
            <table class="waiting">
              <tbody>
                ${v.waiting.map((w) => waitingRow(w, false))}
              </tbody>
            </table>
          </section>`
        : ''
    }

    <div class="grid2">
      <section class="panel" id="gate">
        <h2>Completion gate</h2>
        ${
          v.gate
            ? html`<p>
                  ${v.gate.complete ? html`<span class="badge good">complete</span>` : html`<span class="badge bad">incomplete</span>`}
                  ${v.gate.outcome ? v.gate.outcome.replace(/_/g, ' ') : ''} on ${shortRev(v.gate.revision)}
                  <span class="muted">(#${v.gate.seq})</span>
                </p>
                <ul class="claims">
                  ${v.gate.claims.map(claimLine)}
                </ul>`
            : html`<p class="muted">Not evaluated yet.</p>`
        }
      </section>
      <section class="panel" id="sources">
        <h2>Source threads and deliveries</h2>
        ${v.sources.map(sourceCard)}
      </section>
    </div>

    ${v.checks ? checksPanel(v.checks) : ''}

    <section class="panel" id="evidence">
      <h2>Evidence</h2>
      ${v.evidence.length ? html`<div class="evidence-grid">${v.evidence.map(evidenceCard)}</div>` : html`<p class="muted">No stored evidence yet.</p>`}
    </section>

    <section class="panel" id="receipts">
      <h2>Receipt as posted</h2>
      ${v.receipts.length ? v.receipts.map(receiptBlock) : html`<p class="muted">No receipt yet.</p>`}
    </section>

    ${
      v.findings.length || v.candidates.length
        ? html`<section class="panel" id="monitor">
            <h2>Monitor</h2>
            ${
              v.findings.length
                ? html`<table class="findings">
                    <thead>
                      <tr>
                        <th>#</th>
                        <th>finding</th>
                        <th>owner</th>
                        <th>detail</th>
                        <th>at</th>
                      </tr>
                    </thead>
                    <tbody>
                      ${v.findings.map(
                        (f) =>
                          html`<tr>
                            <td class="num">${f.seq}</td>
                            <td><span class="badge warn">${f.kind.replace(/_/g, ' ')}</span></td>
                            <td>${f.owner}</td>
                            <td>${f.detail}</td>
                            <td class="time">${when(f.occurredAt)}</td>
                          </tr>`,
                      )}
                    </tbody>
                  </table>`
                : ''
            }
            ${
              v.candidates.length
                ? html`<h3>Improvement candidates</h3>
                    <ul class="candidates">
                      ${v.candidates.map((c) => html`<li><b>${c.kind.replace(/_/g, ' ')}</b> — ${c.summary} <span class="muted">(${c.caseIds.length} cases, ${when(c.windowStart)} – ${when(c.windowEnd)})</span></li>`)}
                    </ul>`
                : ''
            }
          </section>`
        : ''
    }
    ${
      v.deadLetters.length
        ? html`<section class="panel bad" id="dead-letters">
            <h2>Dead letters</h2>
            <table>
              <thead>
                <tr>
                  <th>#</th>
                  <th>where</th>
                  <th>consumer</th>
                  <th>code</th>
                  <th>reason</th>
                </tr>
              </thead>
              <tbody>
                ${v.deadLetters.map(
                  (d) =>
                    html`<tr>
                      <td class="num">${d.seq}</td>
                      <td>${d.origin}</td>
                      <td>${d.consumer}</td>
                      <td>${d.code ?? '—'}</td>
                      <td>${d.reason ?? '—'}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </section>`
        : ''
    }

    <section class="panel" id="timeline">
      <h2>Timeline <span class="muted">${v.timeline.length} events, in ledger order</span></h2>
      <table class="timeline">
        <thead>
          <tr>
            <th class="num">seq</th>
            <th>time</th>
            <th>producer</th>
            <th>event</th>
            <th>what happened</th>
          </tr>
        </thead>
        <tbody>
          ${v.timeline.map(timelineRow)}
        </tbody>
      </table>
    </section>
    <p class="foot muted">
      Generated ${when(v.generatedAt)} · <a href="/cases/${encodeURIComponent(s.caseId)}.json">JSON</a>
    </p>`;
  // While checks run, the page follows them: it reloads until the run is over.
  return layout({
    title: `${s.caseId} ${s.title}`,
    active: 'case',
    body,
    ...(v.checks?.running && opts.refreshSeconds ? { refreshSeconds: opts.refreshSeconds } : {}),
    signedInAs: opts.signedInAs,
  });
}

export function waitingPage(v: WaitingView, opts: PageViewer = {}): Html {
  const group = (kind: WaitingItem['kind'], title: string, explain: string): Html => {
    const items = v.items.filter((i) => i.kind === kind);
    return html`<section class="panel" data-group="${kind}">
      <h2>${title} <span class="count ${items.length === 0 ? 'zero' : ''}">${items.length}</span></h2>
      <p class="muted">${explain}</p>
      ${
        items.length
          ? html`<table class="waiting">
              <thead>
                <tr>
                  <th></th>
                  <th>case</th>
                  <th>what</th>
                  <th>since</th>
                </tr>
              </thead>
              <tbody>
                ${items.map((w) => waitingRow(w, true))}
              </tbody>
            </table>`
          : html`<p class="empty">Nothing waiting.</p>`
      }
    </section>`;
  };
  const body = html`<h1>Waiting for a human</h1>
    <p class="muted">Decided in Discord, in the case thread; shown here so nothing waits unseen.</p>
    ${group('link_review', 'Link reviews', 'A report held on a case by a medium-confidence match: a reviewer answers "same" or "different".')}
    ${group('privacy_approval', 'Privacy approvals', 'Evidence not taken on fixture data: a reviewer clears it ("privacy-ok") before it is linked.')}
    ${group('decision', 'Decisions', 'Receipts confirmed in every thread: approve, revise or reject.')}
    <p class="foot muted">Generated ${when(v.generatedAt)} · <a href="/waiting.json">JSON</a></p>`;
  return layout({
    title: 'Waiting for a human',
    active: 'waiting',
    body,
    waiting: v.items.length,
    signedInAs: opts.signedInAs,
  });
}

export function opsFindingsPage(v: OpsFindingsView, opts: PageViewer = {}): Html {
  const shown = v.findings.length;
  const body = html`<h1>Ops findings</h1>
    <p class="muted">
      Gaps the monitor found that belong to no case (a message on a source or ops subject a projection could
      not apply), each addressed to the service that owns the next step. Newest
      first${v.total > shown ? html`: the ${shown} most recent of <b>${v.total}</b>` : ''}.
    </p>
    ${
      shown
        ? html`<section class="panel" id="ops-findings">
            <table class="findings">
              <thead>
                <tr>
                  <th class="num">seq</th>
                  <th>time</th>
                  <th>finding</th>
                  <th>owner</th>
                  <th class="num">about seq</th>
                  <th>detail</th>
                </tr>
              </thead>
              <tbody>
                ${v.findings.map(
                  (f) =>
                    html`<tr data-seq="${f.seq}" data-finding="${f.findingId}" data-kind="${f.kind}">
                      <td class="num"><code>${f.seq}</code></td>
                      <td class="time">${when(f.occurredAt)}</td>
                      <td><span class="badge warn">${f.kind.replace(/_/g, ' ')}</span></td>
                      <td><span class="producer p-${f.owner}">${f.owner}</span></td>
                      <td class="num"><code>${f.observedSeq}</code></td>
                      <td class="detail">${f.detail}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </section>`
        : html`<p class="empty">No ops findings.</p>`
    }
    <p class="foot muted">Generated ${when(v.generatedAt)} · <a href="/findings.json">JSON</a></p>`;
  return layout({
    title: 'Ops findings',
    active: 'findings',
    body,
    opsFindings: v.total,
    signedInAs: opts.signedInAs,
  });
}

export function errorPage(status: number, message: string): Html {
  return layout({
    title: String(status),
    active: 'case',
    body: html`<section class="panel">
      <h1>${status}</h1>
      <p>${message}</p>
      <p><a href="/cases">← all cases</a></p>
    </section>`,
  });
}
