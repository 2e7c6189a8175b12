/** `/findings`: the monitor's findings that belong to no case, newest first. Data: `v` (OpsFindingsView), `signedInAs`. */
export const FINDINGS_TEMPLATES = {
  findings: `<% const shown = it.v.findings.length %>
<% layout('@layout', { page: { title: 'Ops findings', active: 'findings', opsFindings: it.v.total, signedInAs: it.signedInAs } }) %>
<h1>Ops findings</h1>
<p class="muted">
  Gaps the monitor found that belong to no case (a message on a source or ops subject a projection could
  not apply), each addressed to the service that owns the next step. Newest
  first<% if (it.v.total > shown) { %>: the <%= shown %> most recent of <b><%= it.v.total %></b><% } %>.
</p>
<% if (shown) { %>
<section class="panel" id="ops-findings">
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
<% for (const f of it.v.findings) { %>
      <tr data-seq="<%= f.seq %>" data-finding="<%= f.findingId %>" data-kind="<%= f.kind %>">
        <td class="num"><code><%= f.seq %></code></td>
        <td class="time"><%= it.h.when(f.occurredAt) %></td>
        <td><span class="badge warn"><%= it.h.words(f.kind) %></span></td>
        <td><span class="producer p-<%= f.owner %>"><%= f.owner %></span></td>
        <td class="num"><code><%= f.observedSeq %></code></td>
        <td class="detail"><%= f.detail %></td>
      </tr>
<% } %>
    </tbody>
  </table>
</section>
<% } else { %>
<p class="empty">No ops findings.</p>
<% } %>
<p class="foot muted">Generated <%= it.h.when(it.v.generatedAt) %> · <a href="/findings.json">JSON</a></p>
`,
};
