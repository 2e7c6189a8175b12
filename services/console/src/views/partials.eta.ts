/** Small pieces several pages share; each takes its data as named fields of `include`'s data. */

/** Badge tone per case status (`badge-status`: `status`). */
export const STATUS_TONE: Record<string, string> = {
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

/** Badge tone per delivery state (`badge-delivery`: `delivery`). */
export const DELIVERY_TONE: Record<string, string> = {
  confirmed: 'good',
  partly_confirmed: 'warn',
  intended: 'info',
  requested: 'neutral',
  refused: 'bad',
  not_routed: 'neutral',
};

/** Badge tone per check outcome (`checks` panel). */
export const CHECK_TONE: Record<string, string> = {
  running: 'info',
  passed: 'good',
  skipped: 'neutral',
  failed: 'bad',
  timeout: 'bad',
  error: 'warn',
};

export const PARTIAL_TEMPLATES = {
  'badge-status': `<span class="badge <%= it.tones.status[it.status] %>" data-status="<%= it.status %>"><%= it.h.words(it.status) %></span>`,

  'badge-delivery': `<span class="badge <%= it.tones.delivery[it.delivery] %>" data-delivery="<%= it.delivery %>"><%= it.delivery === 'confirmed' ? '✓ ' : it.delivery === 'refused' ? '✗ ' : '' %><%= it.h.words(it.delivery) %></span>`,

  /** A revision, shortened, with the whole one as its title (`rev`: string or null). */
  rev: `<% if (it.rev) { %><code title="<%= it.rev %>"><%= it.rev.slice(0, 10) %></code><% } else { %><span class="muted">—</span><% } %>`,

  /** One claim of the completion gate (`claim`). */
  claim: `<li class="claim <%= it.claim.ok ? 'ok' : 'no' %>" data-claim="<%= it.claim.name %>" data-ok="<%= String(it.claim.ok) %>">
  <span class="mark"><%= it.claim.ok ? '✓' : '✗' %></span><b><%= it.claim.name %></b><span class="detail"><%= it.claim.detail %></span>
</li>
`,

  /** One thing waiting for a human (`item`), with its case when `withCase`. */
  'waiting-row': `<tr data-waiting="<%= it.item.kind %>">
  <td><span class="badge <%= it.item.kind === 'decision' ? 'attention' : 'warn' %>"><%= it.h.words(it.item.kind) %></span></td>
<% if (it.withCase) { %>
  <td>
    <a href="/cases/<%= it.h.seg(it.item.caseId) %>"><code><%= it.item.caseId %></code></a>
    <div class="muted"><%= it.item.caseTitle %></div>
  </td>
<% } %>
  <td><%= it.item.detail %></td>
  <td class="time"><%= it.h.when(it.item.since) %></td>
</tr>
`,
};
