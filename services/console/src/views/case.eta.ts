/** `/cases/:id`: one case, from its head to its timeline. Data: `v` (CaseDetailView), `refreshSeconds` (set only while checks run), `signedInAs`. */
export const CASE_TEMPLATES = {
  case: `<% const s = it.v.summary, v = it.v %>
<% layout('@layout', { page: { title: s.caseId + ' ' + s.title, active: 'case', refreshSeconds: it.refreshSeconds, signedInAs: it.signedInAs } }) %>
<p class="crumbs"><a href="/cases">← all cases</a></p>
<section class="case-head">
  <h1><span class="title"><%= s.title %></span> <%~ include('@badge-status', { status: s.status }) %></h1>
  <dl class="meta">
    <dt>case</dt>
    <dd><code><%= s.caseId %></code></dd>
    <dt>classification</dt>
    <dd><%= s.classification ?? '—' %></dd>
    <dt>owner</dt>
    <dd><%= s.owner ?? '—' %></dd>
    <dt>task</dt>
    <dd><% if (s.taskId) { %><code><%= s.taskId %></code><% } else { %>—<% } %></dd>
    <dt>repository</dt>
    <dd><%= s.repository ?? '—' %><% if (s.targetBranch) { %> (<%= s.targetBranch %>)<% } %></dd>
    <dt>revision</dt>
    <dd><%~ include('@rev', { rev: s.revision }) %></dd>
    <dt>target head</dt>
    <dd><%~ include('@rev', { rev: s.targetHead }) %></dd>
    <dt>branch</dt>
    <dd><% if (s.branch) { %><code><%= s.branch %></code><% } else { %>—<% } %></dd>
    <dt>opened</dt>
    <dd><%= it.h.when(s.openedAt) %></dd>
    <dt>last event</dt>
    <dd>#<%= s.lastSeq %> · <%= it.h.when(s.updatedAt) %></dd>
<% if (s.privacyCategories.length) { %>
    <dt>private context</dt>
    <dd><%= s.privacyCategories.join(', ') %> (removed)</dd>
<% } %>
<% if (s.missing.length) { %>
    <dt>missing</dt>
    <dd><%= s.missing.join(', ') %></dd>
<% } %>
<% if (s.decision) { %>
    <dt>decision</dt>
    <dd><%= s.decision.kind %> by <%= s.decision.reviewerId %></dd>
<% } %>
  </dl>
</section>

<% if (v.waiting.length) { %>
<section class="panel attention">
  <h2>Waiting for a human</h2>
  <table class="waiting">
    <tbody>
<% for (const w of v.waiting) { %>
      <%~ include('@waiting-row', { item: w, withCase: false }) %>
<% } %>
    </tbody>
  </table>
</section>
<% } %>

<div class="grid2">
  <section class="panel" id="gate">
    <h2>Completion gate</h2>
<% if (v.gate) { %>
    <p>
      <% if (v.gate.complete) { %><span class="badge good">complete</span><% } else { %><span class="badge bad">incomplete</span><% } %>
      <%= v.gate.outcome ? it.h.words(v.gate.outcome) : '' %> on <%~ include('@rev', { rev: v.gate.revision }) %>
      <span class="muted">(#<%= v.gate.seq %>)</span>
    </p>
    <ul class="claims">
<% for (const claim of v.gate.claims) { %>
      <%~ include('@claim', { claim }) %>
<% } %>
    </ul>
<% } else { %>
    <p class="muted">Not evaluated yet.</p>
<% } %>
  </section>
  <section class="panel" id="sources">
    <h2>Source threads and deliveries</h2>
<% for (const source of v.sources) { %>
    <%~ include('@source-thread', { source }) %>
<% } %>
  </section>
</div>

<% if (v.checks) { %>
<%~ include('@checks', { checks: v.checks }) %>
<% } %>

<section class="panel" id="evidence">
  <h2>Evidence</h2>
<% if (v.evidence.length) { %>
  <div class="evidence-grid">
<% for (const e of v.evidence) { %>
    <%~ include('@evidence', { e }) %>
<% } %>
  </div>
<% } else { %>
  <p class="muted">No stored evidence yet.</p>
<% } %>
</section>

<section class="panel" id="receipts">
  <h2>Receipt as posted</h2>
<% if (v.receipts.length) { %>
<% for (const receipt of v.receipts) { %>
  <%~ include('@receipt', { receipt }) %>
<% } %>
<% } else { %>
  <p class="muted">No receipt yet.</p>
<% } %>
</section>

<% if (v.findings.length || v.candidates.length) { %>
<section class="panel" id="monitor">
  <h2>Monitor</h2>
<% if (v.findings.length) { %>
  <table class="findings">
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
<% for (const f of v.findings) { %>
      <tr>
        <td class="num"><%= f.seq %></td>
        <td><span class="badge warn"><%= it.h.words(f.kind) %></span></td>
        <td><%= f.owner %></td>
        <td><%= f.detail %></td>
        <td class="time"><%= it.h.when(f.occurredAt) %></td>
      </tr>
<% } %>
    </tbody>
  </table>
<% } %>
<% if (v.candidates.length) { %>
  <h3>Improvement candidates</h3>
  <ul class="candidates">
<% for (const c of v.candidates) { %>
    <li><b><%= it.h.words(c.kind) %></b> — <%= c.summary %> <span class="muted">(<%= c.caseIds.length %> cases, <%= it.h.when(c.windowStart) %> – <%= it.h.when(c.windowEnd) %>)</span></li>
<% } %>
  </ul>
<% } %>
</section>
<% } %>
<% if (v.deadLetters.length) { %>
<section class="panel bad" id="dead-letters">
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
<% for (const d of v.deadLetters) { %>
      <tr>
        <td class="num"><%= d.seq %></td>
        <td><%= d.origin %></td>
        <td><%= d.consumer %></td>
        <td><%= d.code ?? '—' %></td>
        <td><%= d.reason ?? '—' %></td>
      </tr>
<% } %>
    </tbody>
  </table>
</section>
<% } %>

<section class="panel" id="timeline">
  <h2>Timeline <span class="muted"><%= v.timeline.length %> events, in ledger order</span></h2>
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
<% for (const entry of v.timeline) { %>
      <%~ include('@timeline-row', { entry }) %>
<% } %>
    </tbody>
  </table>
</section>
<p class="foot muted">
  Generated <%= it.h.when(v.generatedAt) %> · <a href="/cases/<%= it.h.seg(s.caseId) %>.json">JSON</a>
</p>
`,

  /** One ledger event (`entry`: TimelineEntry). */
  'timeline-row': `<% const e = it.entry %>
<tr class="tone-<%= e.tone %>" data-seq="<%= e.seq %>" data-type="<%= e.type %>">
  <td class="num"><code><%= e.seq %></code></td>
  <td class="time"><%= it.h.when(e.occurredAt) %></td>
  <td><span class="producer p-<%= e.producer %>"><%= e.producer %></span><% if (e.aggregate !== 'case') { %><span class="agg"><%= e.aggregate %></span><% } %></td>
  <td><span class="evt"><%= e.type %></span></td>
  <td>
    <div class="summary"><%= e.summary %></div>
<% if (e.facts.length) { %>
    <dl class="facts">
<% for (const f of e.facts) { %>
      <dt><%= f.label %></dt>
      <dd><%= f.value %></dd>
<% } %>
    </dl>
<% } %>
<% if (e.reasons.length) { %>
    <ul class="reasons">
<% for (const r of e.reasons) { %>
      <li><%= r %></li>
<% } %>
    </ul>
<% } %>
<% if (e.claims) { %>
    <ul class="claims compact">
<% for (const claim of e.claims) { %>
      <%~ include('@claim', { claim }) %>
<% } %>
    </ul>
<% } %>
  </td>
</tr>
`,

  /** A source thread and the deliveries to it (`source`: SourceThread). */
  'source-thread': `<% const s = it.source %>
<div class="thread" data-source="<%= s.sourceId %>">
  <div class="thread-head">
    <code><%= s.sourceId %></code>
    <span class="muted">via <%= s.via %> · reporter <%= s.reporterId %> · channel <%= s.channelId %><% if (s.threadId) { %> · thread <%= s.threadId %><% } %></span>
  </div>
<% if (s.deliveries.length === 0) { %>
  <p class="muted">No deliveries to this thread yet.</p>
<% } else { %>
  <table class="deliveries">
    <thead>
      <tr>
        <th>post</th>
        <th>state</th>
        <th>chunks</th>
        <th>Discord message</th>
      </tr>
    </thead>
    <tbody>
<% for (const d of s.deliveries) { %>
      <tr data-delivery-id="<%= d.deliveryId %>" data-kind="<%= d.kind %>">
        <td><b><%= d.kind %></b><% if (d.receiptId) { %> <span class="muted"><%= d.receiptId %></span><% } %></td>
        <td><%~ include('@badge-delivery', { delivery: d.state }) %><% if (d.refusal) { %> <span class="muted"><%= d.refusal %></span><% } %></td>
        <td class="num"><%= d.chunks.confirmed %>/<%= d.chunks.total ?? '?' %></td>
        <td><% if (d.discordMessageIds.length) { %><% for (const m of d.discordMessageIds) { %><code><%= m %></code> <% } %><% } else { %><span class="muted">—</span><% } %></td>
      </tr>
<% } %>
    </tbody>
  </table>
<% } %>
</div>
`,

  /** One stored artifact (`e`: EvidenceItem); linked only when the view model made it a URL. */
  evidence: `<% const e = it.e %>
<figure class="evidence" data-artifact="<%= e.artifactId %>" data-sha256="<%= e.sha256 %>">
<% if (e.thumbnail && e.url) { %>
  <a href="<%= it.h.safeUrl(e.url) %>" rel="noreferrer noopener" target="_blank"><img class="thumb" src="<%= it.h.safeUrl(e.url) %>" alt="<%= e.kind %> <%= e.artifactId %>" loading="lazy" referrerpolicy="no-referrer" /></a>
<% } else { %>
  <div class="thumb placeholder">
    <%= e.kind %><% if (!e.shareable) { %><br /><small><%= e.review === 'needs_human' ? 'awaiting privacy approval' : 'not shareable' %></small><% } %>
  </div>
<% } %>
  <figcaption>
    <div>
      <b><%= e.kind %></b>
<% if (e.url && !e.thumbnail) { %>
      <a href="<%= it.h.safeUrl(e.url) %>" rel="noreferrer noopener">open</a>
<% } %>
    </div>
    <div class="sha" title="sha-256">sha-256 <code><%= e.sha256 %></code></div>
    <dl class="tags">
      <dt>lease token</dt>
      <dd><%= e.leaseToken ?? '—' %></dd>
      <dt>revision</dt>
      <dd><%~ include('@rev', { rev: e.revision }) %></dd>
<% if (e.captureId) { %>
      <dt>capture</dt>
      <dd><code><%= e.captureId %></code></dd>
<% } %>
<% if (e.step) { %>
      <dt>step</dt>
      <dd><%= e.step %></dd>
<% } %>
      <dt>review</dt>
      <dd><%= e.review ?? '—' %></dd>
      <dt>size</dt>
      <dd><%= e.bytes %> B</dd>
    </dl>
  </figcaption>
</figure>
`,

  /** A receipt as built and as posted (`receipt`: ReceiptView); its text through the markdown renderer. */
  receipt: `<% const r = it.receipt %>
<article class="receipt" data-receipt="<%= r.receiptId %>">
  <div class="receipt-head">
    <b><%= r.receiptId %></b> · <%= it.h.words(r.outcome) %> · <%~ include('@rev', { rev: r.revision }) %> · built
    <%= it.h.when(r.builtAt) %>
  </div>
<% if (r.posted.length === 0) { %>
  <div class="receipt-note muted">Built; not routed to any thread yet.</div>
  <div class="rendered"><%~ it.h.markdown(r.rendered) %></div>
<% } else { %>
<% for (const p of r.posted) { %>
  <div class="receipt-note muted">
    As posted to <% for (const id of p.sourceIds) { %><code><%= id %></code> <% } %>
  </div>
  <div class="rendered" data-posted="<%= p.sourceIds.join(' ') %>"><%~ it.h.markdown(p.content) %></div>
<% } %>
<% } %>
  <div class="receipt-threads">
    Confirmation per source thread:
<% for (const t of r.threads) { %>
    <span class="rt"><code><%= t.sourceId %></code> <%~ include('@badge-delivery', { delivery: t.state }) %></span>
<% } %>
  </div>
</article>
`,

  /** The latest run of the checks (`checks`: ChecksProgressView). */
  checks: `<% const c = it.checks, done = c.lines.filter((l) => l.status !== 'running').length %>
<section class="panel" id="checks" data-running="<%= c.running ? 'true' : 'false' %>">
  <h2>
    Checks on <%~ include('@rev', { rev: c.revision }) %>
    <span class="muted"><%= done %>/<%= c.total %> done<%= c.running ? ' · running, this page reloads' : '' %></span>
  </h2>
  <table class="checks">
    <tbody>
<% for (const l of c.lines) { %>
      <tr data-check="<%= l.name %>" data-status="<%= l.status %>">
        <td><%= l.index + 1 %>/<%= c.total %></td>
        <td><code><%= l.name %></code> <span class="muted"><%= l.kind %></span></td>
        <td><span class="badge <%= it.tones.check[l.status] %>"><%= l.status %></span></td>
        <td><%= l.durationMs === null ? 'since ' + it.h.when(l.startedAt) : (l.durationMs / 1000).toFixed(1) + ' s' %></td>
        <td><% if (l.tail.length) { %><pre class="tail"><%= l.tail.join('\\n') %></pre><% } %></td>
      </tr>
<% } %>
    </tbody>
  </table>
</section>
`,
};
