/**
 * The page frame, the error page and the signed-out page. A page sets its frame with
 * `layout('@layout', { page: { title, active, refreshSeconds?, waiting?, opsFindings?, signedInAs? } })`.
 */
export const LAYOUT_TEMPLATES = {
  layout: `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <meta name="referrer" content="no-referrer" />
<% if (it.page.refreshSeconds) { %>
    <meta http-equiv="refresh" content="<%= it.page.refreshSeconds %>" />
<% } %>
    <title><%= it.page.title %> · caseloop</title>
    <link rel="stylesheet" href="/case-page.css" />
  </head>
  <body>
    <header class="top">
      <a class="brand" href="/cases">caseloop</a>
      <nav>
        <a href="/cases" class="<%= it.page.active === 'cases' ? 'on' : '' %>">Cases</a>
        <a href="/waiting" class="<%= it.page.active === 'waiting' ? 'on' : '' %>">Waiting for a human<% if (it.page.waiting) { %> <span class="count"><%= it.page.waiting %></span><% } %></a>
        <a href="/findings" class="<%= it.page.active === 'findings' ? 'on' : '' %>">Ops findings<% if (it.page.opsFindings) { %> <span class="count warn"><%= it.page.opsFindings %></span><% } %></a>
      </nav>
      <span class="note">read-only · from the ledger projections</span>
<% if (it.page.signedInAs) { %>
      <form class="viewer" method="post" action="/auth/sign-out">
        <span><%= it.page.signedInAs %></span> <button type="submit">Sign out</button>
      </form>
<% } %>
    </header>
    <main><%~ it.body %></main>
  </body>
</html>
`,

  error: `<% layout('@layout', { page: { title: String(it.status), active: 'case' } }) %>
<section class="panel">
  <h1><%= it.status %></h1>
  <p><%= it.message %></p>
  <p><a href="/cases">← all cases</a></p>
</section>
`,

  'signed-out': `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>Signed out · caseloop</title>
    <link rel="stylesheet" href="/case-page.css" />
  </head>
  <body>
    <main>
      <p>Signed out. <a href="/auth/sign-in">Sign in again</a></p>
    </main>
  </body>
</html>
`,
};
