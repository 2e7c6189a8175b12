import type { CaseDetailView, CaseListView, OpsFindingsView, WaitingView } from '../cases/case-page.view';
import { Html, render } from './engine';

/** Server-rendered pages: no script at all; the stylesheet is served by the page's own listener. */

/** Who is signed in (shown with a sign-out form); absent when the console runs without sign-in. */
export interface PageViewer {
  signedInAs?: string;
}

const TERMINAL = ['approved', 'rejected', 'duplicate'];

export function casesPage(v: CaseListView, opts: { refreshSeconds: number } & PageViewer): Html {
  const total = Object.values(v.counts).reduce((a, b) => a + (b ?? 0), 0);
  const live = Object.entries(v.counts)
    .filter(([s]) => !TERMINAL.includes(s))
    .reduce((a, [, n]) => a + (n ?? 0), 0);
  const shown = v.statuses.filter((s) => (v.counts[s] ?? 0) > 0 || v.filter.status === s);
  return render('cases', {
    v,
    total,
    live,
    shown,
    refreshSeconds: opts.refreshSeconds,
    signedInAs: opts.signedInAs,
  });
}

/** While checks run, the page follows them: it reloads until the run is over. */
export function casePage(v: CaseDetailView, opts: { refreshSeconds?: number } & PageViewer = {}): Html {
  return render('case', {
    v,
    refreshSeconds: v.checks?.running && opts.refreshSeconds ? opts.refreshSeconds : undefined,
    signedInAs: opts.signedInAs,
  });
}

export function waitingPage(v: WaitingView, opts: PageViewer = {}): Html {
  return render('waiting', { v, signedInAs: opts.signedInAs });
}

export function opsFindingsPage(v: OpsFindingsView, opts: PageViewer = {}): Html {
  return render('findings', { v, signedInAs: opts.signedInAs });
}

export function errorPage(status: number, message: string): Html {
  return render('error', { status, message });
}

export function signedOutPage(): Html {
  return render('signed-out', {});
}
