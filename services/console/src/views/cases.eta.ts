/** `/cases`: the trust measures and every case, filterable by status. Data: `v` (CaseListView), `refreshSeconds`, `signedInAs`, plus `total` and `live` counts and the `shown` statuses. */
export const CASES_TEMPLATES = {
  cases: `<% layout('@layout', { page: { title: 'Cases', active: 'cases', refreshSeconds: it.refreshSeconds, waiting: it.v.waiting, opsFindings: it.v.opsFindings, signedInAs: it.signedInAs } }) %>
<% const st = it.v.stats, d = st.duplicatePrevention, c = st.cycleTime %>
<section class="measures" aria-label="trust measures">
  <%~ include('@ratio-card', { label: 'duplicate prevention', r: d, unit: 'linked', explain: 'reports (' + d.opened + ' opened, ' + d.linked + ' linked, ' + d.held + ' held)' }) %>
  <%~ include('@ratio-card', { label: 'stale-proof rejections', r: st.staleProofRejections, unit: 'stale', explain: 'passing check runs' }) %>
  <%~ include('@ratio-card', { label: 'receipt completeness', r: st.receiptCompleteness, unit: 'confirmed at every source', explain: 'receipts routed' }) %>
  <div class="card" data-measure="cycle time">
    <div class="label">cycle time (verified completions)</div>
    <div class="value"><%= c.p50Minutes === null ? 'n/a' : c.p50Minutes + ' min' %></div>
    <div class="denom">
      p50 over <b><%= c.verifiedCompletions %></b> verified
      completion(s)<% if (c.p90Minutes !== null) { %> · p90 <%= c.p90Minutes %> min · mean <%= c.meanMinutes %> min<% } %>
    </div>
  </div>
  <div class="card" data-measure="improvement candidates">
    <div class="label">improvement candidates</div>
    <div class="value"><%= st.improvementCandidates %></div>
    <div class="denom">from <b><%= st.eventsRead %></b> ledger events (whole ledger)</div>
  </div>
</section>
<section>
  <div class="bar">
    <h1>Cases</h1>
    <nav class="chips" aria-label="filter by status">
      <%~ include('@chip', { value: 'all', label: 'all', n: it.total, on: it.v.filter.status === null }) %>
      <%~ include('@chip', { value: 'live', label: 'live', n: it.live, on: it.v.filter.status === 'live' }) %>
<% for (const s of it.shown) { %>
      <%~ include('@chip', { value: s, label: it.h.words(s), n: it.v.counts[s] ?? 0, on: it.v.filter.status === s }) %>
<% } %>
    </nav>
  </div>
<% if (it.v.cases.length === 0) { %>
  <p class="empty">
    No cases<% if (it.v.filter.status) { %> with status <b><%= it.v.filter.status %></b><% } %> yet.
  </p>
<% } else { %>
  <table class="cases">
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
<% for (const r of it.v.cases) { %>
      <tr class="<%= r.live ? 'live' : 'settled' %>" data-case="<%= r.caseId %>">
        <td><a href="/cases/<%= it.h.seg(r.caseId) %>"><code><%= r.caseId %></code></a></td>
        <td class="title"><%= r.title %></td>
        <td><%~ include('@badge-status', { status: r.status }) %></td>
        <td><% if (r.classification !== null) { %><%= r.classification %><% } else { %><span class="muted">—</span><% } %></td>
        <td class="num"><%= r.sources %></td>
        <td><% if (r.taskId) { %><code><%= r.taskId %></code><% } else { %><span class="muted">—</span><% } %></td>
        <td><%~ include('@rev', { rev: r.revision }) %></td>
        <td title="opened <%= it.h.when(r.openedAt) %>"><%= it.h.duration(r.ageMinutes) %></td>
        <td>
          <span class="evt"><%= r.lastEventType %></span>
          <span class="muted">#<%= r.lastSeq %> · <%= it.h.duration(r.lastEventAgoMinutes) %> ago</span>
        </td>
      </tr>
<% } %>
    </tbody>
  </table>
<% } %>
  <p class="foot muted">
    Generated
    <%= it.h.when(it.v.generatedAt) %><% if (it.refreshSeconds) { %> · reloads every <%= it.refreshSeconds %> s<% } %> ·
    <a href="/cases.json<%= it.v.filter.status ? '?status=' + it.v.filter.status : '' %>">JSON</a>
  </p>
</section>
`,

  /** A trust measure as a ratio (`label`, `r`, `unit`, `explain`). */
  'ratio-card': `<div class="card" data-measure="<%= it.label %>">
  <div class="label"><%= it.label %></div>
  <div class="value"><%= it.r.ratio === null ? 'n/a' : (it.r.ratio * 100).toFixed(1) + '%' %></div>
  <div class="denom"><b><%= it.r.numerator %></b> <%= it.unit %> / <b><%= it.r.denominator %></b> <%= it.explain %></div>
</div>
`,

  /** A status filter (`value`, `label`, `n`, `on`). */
  chip: `<a class="chip <%= it.on ? 'on' : '' %>" href="/cases<%= it.value === 'all' ? '' : '?status=' + it.value %>"><%= it.label %> <span><%= it.n %></span></a>`,
};
