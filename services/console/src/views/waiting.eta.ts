/** `/waiting`: what waits for a human, by kind. Data: `v` (WaitingView), `signedInAs`. */
export const WAITING_TEMPLATES = {
  waiting: `<% layout('@layout', { page: { title: 'Waiting for a human', active: 'waiting', waiting: it.v.items.length, signedInAs: it.signedInAs } }) %>
<h1>Waiting for a human</h1>
<p class="muted">Decided in Discord, in the case thread; shown here so nothing waits unseen.</p>
<%~ include('@waiting-group', { kind: 'link_review', title: 'Link reviews', explain: 'A report held on a case by a medium-confidence match: a reviewer answers "same" or "different".' }) %>
<%~ include('@waiting-group', { kind: 'privacy_approval', title: 'Privacy approvals', explain: 'Evidence not taken on fixture data: a reviewer clears it ("privacy-ok") before it is linked.' }) %>
<%~ include('@waiting-group', { kind: 'decision', title: 'Decisions', explain: 'Receipts confirmed in every thread: approve, revise or reject.' }) %>
<p class="foot muted">Generated <%= it.h.when(it.v.generatedAt) %> · <a href="/waiting.json">JSON</a></p>
`,

  /** The items of one kind (`kind`, `title`, `explain`). */
  'waiting-group': `<% const items = it.v.items.filter((i) => i.kind === it.kind) %>
<section class="panel" data-group="<%= it.kind %>">
  <h2><%= it.title %> <span class="count <%= items.length === 0 ? 'zero' : '' %>"><%= items.length %></span></h2>
  <p class="muted"><%= it.explain %></p>
<% if (items.length) { %>
  <table class="waiting">
    <thead>
      <tr>
        <th></th>
        <th>case</th>
        <th>what</th>
        <th>since</th>
      </tr>
    </thead>
    <tbody>
<% for (const item of items) { %>
      <%~ include('@waiting-row', { item, withCase: true }) %>
<% } %>
    </tbody>
  </table>
<% } else { %>
  <p class="empty">Nothing waiting.</p>
<% } %>
</section>
`,
};
