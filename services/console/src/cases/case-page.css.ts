/** The page's only stylesheet, served at /case-page.css so the CSP needs no inline styles. */
export const CASE_PAGE_CSS = `
:root {
  --bg: #f6f7f9; --panel: #fff; --ink: #1d2330; --muted: #6b7385; --line: #e3e6ec;
  --accent: #3056d3; --good: #1f7a4d; --good-bg: #e3f4ea; --bad: #b42318; --bad-bg: #fde8e6;
  --warn: #8a5a00; --warn-bg: #fff3d6; --info: #1f4fa8; --info-bg: #e6eefc; --att: #6d28d9; --att-bg: #efe7ff;
  --neutral: #4b5565; --neutral-bg: #eef0f3;
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--ink); font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
code, pre, .sha { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
.top { display: flex; align-items: center; gap: 24px; padding: 10px 28px; background: #161b26; color: #dfe4ee; }
.top .brand { color: #fff; font-weight: 700; letter-spacing: .02em; font-size: 16px; }
.top nav a { color: #c3cad8; margin-right: 18px; padding: 4px 0; }
.top nav a.on { color: #fff; border-bottom: 2px solid #7aa2ff; }
.top .note { margin-left: auto; color: #8b93a7; font-size: 12px; }
.top .viewer { margin: 0 0 0 14px; color: #c9d1e3; font-size: 12px; }
.top .viewer button { font: inherit; color: inherit; background: transparent; border: 1px solid #4a5470; border-radius: 4px; padding: 2px 8px; cursor: pointer; }
.count { display: inline-block; min-width: 20px; padding: 0 6px; border-radius: 10px; background: var(--att); color: #fff; font-size: 11px; text-align: center; }
h2 .count.zero { background: var(--neutral-bg); color: var(--muted); }
.count.warn { background: #e0a100; color: #1d2330; }
main { max-width: 1320px; margin: 0 auto; padding: 22px 28px 40px; }
h1 { font-size: 20px; margin: 0 0 12px; }
h2 { font-size: 15px; margin: 0 0 12px; }
h3 { font-size: 13px; margin: 14px 0 6px; }
.muted { color: var(--muted); }
.measures { display: grid; grid-template-columns: repeat(5, minmax(0, 1fr)); gap: 12px; margin-bottom: 22px; }
.card { background: var(--panel); border: 1px solid var(--line); border-radius: 10px; padding: 12px 14px; }
.card .label { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
.card .value { font-size: 24px; font-weight: 650; margin: 2px 0; }
.card .denom { color: var(--muted); font-size: 12px; }
.card .denom b { color: var(--ink); }
.bar { display: flex; align-items: baseline; gap: 18px; flex-wrap: wrap; margin-bottom: 10px; }
.bar h1 { margin: 0; }
.chips { display: flex; flex-wrap: wrap; gap: 6px; }
.chip { padding: 3px 10px; border-radius: 14px; border: 1px solid var(--line); background: var(--panel); color: var(--ink); font-size: 12.5px; }
.chip span { color: var(--muted); margin-left: 2px; }
.chip.on { background: var(--ink); color: #fff; border-color: var(--ink); }
.chip.on span { color: #c9cfdb; }
table { width: 100%; border-collapse: collapse; background: var(--panel); }
th { text-align: left; font-weight: 600; color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .03em; }
th, td { padding: 8px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
td.num, th.num { text-align: right; white-space: nowrap; }
table.cases { border: 1px solid var(--line); border-radius: 10px; overflow: hidden; }
table.cases tr.settled { color: var(--muted); }
table.cases tr:hover { background: #fafbfd; }
table.cases td.title { min-width: 280px; max-width: 460px; overflow-wrap: anywhere; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 600; white-space: nowrap; }
.badge.good { background: var(--good-bg); color: var(--good); }
.badge.bad { background: var(--bad-bg); color: var(--bad); }
.badge.warn { background: var(--warn-bg); color: var(--warn); }
.badge.info { background: var(--info-bg); color: var(--info); }
.badge.attention { background: var(--att-bg); color: var(--att); }
.badge.neutral { background: var(--neutral-bg); color: var(--neutral); }
.evt { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
.empty { padding: 20px; background: var(--panel); border: 1px dashed var(--line); border-radius: 10px; color: var(--muted); }
.foot { margin-top: 14px; font-size: 12px; }
.crumbs { margin: 0 0 8px; }
.case-head { background: var(--panel); border: 1px solid var(--line); border-radius: 10px; padding: 16px 18px; margin-bottom: 16px; }
.case-head h1 { display: flex; gap: 12px; align-items: center; flex-wrap: wrap; overflow-wrap: anywhere; }
dl.meta { display: grid; grid-template-columns: repeat(3, max-content minmax(0, 1fr)); gap: 4px 12px; margin: 0; }
dl.meta dt, dl.facts dt, dl.tags dt { color: var(--muted); }
dl.meta dd, dl.facts dd, dl.tags dd { margin: 0; overflow-wrap: anywhere; }
.panel { background: var(--panel); border: 1px solid var(--line); border-radius: 10px; padding: 16px 18px; margin-bottom: 16px; }
.panel.attention { border-color: #cdb8ff; background: #fbf8ff; }
.panel.bad { border-color: #f3b8b2; }
.panel table { border: 0; }
.grid2 { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1.4fr); gap: 16px; align-items: start; }
.grid2 .panel { margin-bottom: 16px; }
ul.claims { list-style: none; margin: 0; padding: 0; }
.claim { display: grid; grid-template-columns: 26px 80px 1fr; gap: 6px; padding: 6px 0; border-bottom: 1px solid var(--line); align-items: baseline; }
.claim:last-child { border-bottom: 0; }
.claim .mark { font-weight: 800; font-size: 16px; text-align: center; }
.claim.ok .mark { color: var(--good); }
.claim.no .mark { color: var(--bad); }
.claim .detail { color: var(--muted); overflow-wrap: anywhere; }
ul.claims.compact .claim { padding: 2px 0; border: 0; grid-template-columns: 18px 70px 1fr; font-size: 12.5px; }
.thread { border: 1px solid var(--line); border-radius: 8px; padding: 10px 12px; margin-bottom: 10px; }
.thread-head { margin-bottom: 6px; overflow-wrap: anywhere; }
table.deliveries th, table.deliveries td { padding: 4px 8px; }
table.checks td { padding: 3px 8px; vertical-align: top; }
table.checks pre.tail { margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; color: var(--muted, #666); }
.evidence-grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(260px, 1fr)); gap: 14px; }
figure.evidence { margin: 0; border: 1px solid var(--line); border-radius: 8px; overflow: hidden; background: #fbfcfd; }
img.thumb, .thumb.placeholder { display: block; width: 100%; height: 170px; object-fit: cover; object-position: top; background: #eef0f3; border-bottom: 1px solid var(--line); }
.thumb.placeholder { display: flex; flex-direction: column; align-items: center; justify-content: center; color: var(--muted); text-transform: uppercase; font-size: 12px; text-align: center; }
figcaption { padding: 8px 10px; font-size: 12.5px; }
figcaption .sha code { font-size: 11px; overflow-wrap: anywhere; color: var(--neutral); }
dl.tags { display: grid; grid-template-columns: max-content 1fr; gap: 2px 10px; margin: 6px 0 0; }
.receipt { border: 1px solid var(--line); border-radius: 8px; margin-bottom: 10px; overflow: hidden; }
.receipt-head { padding: 8px 12px; background: #f3f5f8; border-bottom: 1px solid var(--line); }
.receipt-note { padding: 6px 14px 0; font-size: 12px; }
/* A receipt as Discord shows it: the chat page's markdown classes, line breaks kept as posted. */
.rendered { margin: 0; padding: 12px 14px; white-space: pre-wrap; overflow-wrap: anywhere; background: #fff; }
.rendered .md-h1, .rendered .md-h2, .rendered .md-h3 { font-weight: 700; line-height: 1.3; margin: 6px 0 2px; }
.rendered .md-h1 { font-size: 1.45em; }
.rendered .md-h2 { font-size: 1.25em; }
.rendered .md-h3 { font-size: 1.1em; }
.rendered .md-code { background: var(--neutral-bg); border-radius: 4px; padding: .1em .3em; }
.rendered .md-pre { margin: 4px 0; padding: 8px 10px; background: #f6f7f9; border: 1px solid var(--line); border-radius: 4px; white-space: pre-wrap; }
.rendered .md-list { margin: 2px 0; padding-left: 1.4em; }
.rendered .md-depth-1 { margin-left: 1.2em; }
.rendered .md-depth-2 { margin-left: 2.4em; }
.rendered .md-depth-3 { margin-left: 3.6em; }
.rendered .md-depth-4 { margin-left: 4.8em; }
.rendered .md-quote { margin: 2px 0; padding-left: 10px; border-left: 4px solid var(--line); }
.rendered .mention { background: var(--info-bg); color: var(--info); border-radius: 3px; padding: 0 2px; }
.receipt-threads { padding: 8px 12px; border-top: 1px solid var(--line); display: flex; gap: 12px; flex-wrap: wrap; align-items: center; }
table.findings td.detail { font-size: 13px; overflow-wrap: anywhere; }
table.timeline td { font-size: 13px; }
table.timeline td.time, td.time { white-space: nowrap; color: var(--muted); font-size: 12px; }
table.timeline tr.tone-good { box-shadow: inset 3px 0 0 var(--good); }
table.timeline tr.tone-bad { box-shadow: inset 3px 0 0 var(--bad); }
table.timeline tr.tone-warn { box-shadow: inset 3px 0 0 #e0a100; }
table.timeline tr.tone-info { box-shadow: inset 3px 0 0 var(--info); }
.summary { font-weight: 550; overflow-wrap: anywhere; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 1px 10px; margin: 4px 0 0; font-size: 12.5px; }
ul.reasons { margin: 4px 0 0; padding-left: 18px; color: var(--neutral); font-size: 12.5px; }
.producer { display: inline-block; padding: 0 7px; border-radius: 4px; font-size: 12px; background: var(--neutral-bg); }
.p-intake { background: #e0f2fe; color: #075985; }
.p-coordinator { background: #ede9fe; color: #5b21b6; }
.p-worker { background: #fef3c7; color: #92400e; }
.p-lease { background: #fce7f3; color: #9d174d; }
.p-evidence { background: #dcfce7; color: #166534; }
.p-monitor { background: #f1f5f9; color: #334155; }
.agg { margin-left: 4px; font-size: 11px; color: var(--muted); }
.rt { white-space: nowrap; }
@media (max-width: 1000px) { .measures { grid-template-columns: repeat(2, 1fr); } .grid2 { grid-template-columns: 1fr; } dl.meta { grid-template-columns: max-content 1fr; } }
`;
