import { stringify } from 'yaml';
import { Inspection } from './repository.inspector';

export interface EntryPlace {
  url: string;
  targetBranch: string;
  /** The starter flow, as written in the entry (relative to the repositories file). */
  flow: string;
  /** The Node version checks run with here, for the comment beside the repository's own wish. */
  nodeHere: string;
}

/** One YAML value on one line (`["npm", "ci"]`, `"a: b"`), the way the schema reads it back. */
const inline = (v: unknown): string => stringify(v, { collectionStyle: 'flow', lineWidth: 0 }).trim();

/**
 * The repositories entry `caseloop repo init` proposes, as commented YAML: every value is one the
 * schema accepts, every comment says where it came from or what to decide.
 */
export function renderEntry(i: Inspection, place: EntryPlace): string {
  const out: string[] = [];
  const line = (indent: number, text: string) => out.push(`${' '.repeat(indent)}${text}`);
  line(2, `# ${i.id}: proposed by \`caseloop repo init\`; prove it with \`caseloop repo check ${i.id}\`.`);
  if (i.packageManager)
    line(
      2,
      `# package manager: ${i.packageManager}${i.lockfile ? ` (lockfile ${i.lockfile})` : ' (no lockfile)'}`,
    );
  if (i.node)
    line(
      2,
      `# Node: the repository asks for ${i.node.wanted} (${i.node.from}); checks run with ${place.nodeHere} here`,
    );
  for (const n of i.notes) line(2, `# note: ${n}`);
  line(2, `- id: ${inline(i.id)}`);
  line(4, `url: ${inline(place.url)}`);
  line(4, `targetBranch: ${inline(place.targetBranch)}`);
  line(
    4,
    '# credentialsFile: secrets/git-token   # a private remote: `token` or `username:token`, read by git only',
  );
  if (i.setup.length) {
    line(4, '# Runs in every fresh worktree before the checks; again only when one of its inputs changes.');
    line(4, 'setup:');
    for (const s of i.setup) {
      line(6, `- name: ${inline(s.name)}`);
      line(8, `command: ${inline(s.command)}`);
      line(8, `timeoutMs: ${s.timeoutMs}`);
      if (s.inputs?.length) line(8, `inputs: ${inline(s.inputs)}`);
    }
  } else {
    line(
      4,
      `# setup: none proposed (${i.packageManager ? 'no dependencies' : 'no install step was recognized'}). A step looks like:`,
    );
    line(
      4,
      '#   - { name: install, command: [npm, ci], timeoutMs: 900000, inputs: [package.json, package-lock.json] }',
    );
  }
  line(
    4,
    '# env: { NODE_OPTIONS: "--max-old-space-size=4096" }   # non-secret variables for setup, checks and the client',
  );
  line(
    4,
    '# secretFiles: { NPM_TOKEN: secrets/npm-token }       # a private registry (.npmrc: //host/:_authToken=${NPM_TOKEN})',
  );
  if (i.checks.length) {
    line(
      4,
      "# The repository's own scripts, by kind; each runs on the case branch's revision, in this order.",
    );
    line(4, 'checks:');
    for (const c of i.checks) {
      line(6, `- name: ${inline(c.name)}`);
      line(8, `kind: ${c.kind}`);
      line(8, `command: ${inline(c.command)}`);
      if (c.cwd) line(8, `cwd: ${inline(c.cwd)} # the workspace it runs in`);
      line(8, `timeoutMs: ${c.timeoutMs}`);
    }
  } else {
    line(4, '# No scripts were found to run as checks: at least one is required. For example:');
    line(4, 'checks:');
    // Without package.json `npm test` can only fail: the placeholder fails saying what to do instead.
    if (i.packageManager)
      line(6, '- { name: test, kind: regression_test, command: [npm, test], timeoutMs: 600000 }');
    else
      line(
        6,
        `- { name: test, kind: regression_test, command: [sh, -c, 'echo "no check configured: put the repository''s test command here" >&2; exit 1'], timeoutMs: 600000 }`,
      );
  }
  for (const s of i.skipped) line(4, `# not a check: ${s}`);
  if (i.client) {
    line(4, `# The client the flow drives in Chromium: ${i.client.how}.`);
    line(4, 'client:');
    line(6, `start: ${inline(i.client.start)}`);
    if (i.client.cwd) line(6, `cwd: ${inline(i.client.cwd)} # the workspace it starts in`);
    line(6, `url: ${inline(i.client.url)}`);
    line(6, '# port: 4173        # only for a client that cannot be told its port ({port} / $PORT)');
    line(6, `readyPath: ${inline(i.client.readyPath ?? '/')}`);
    line(6, `flow: ${inline(place.flow)}`);
    line(6, '# true: the flow shows only fixture data, so its screenshots need no human privacy check');
    line(6, `fixtureData: ${i.client.fixtureData}`);
  } else {
    line(
      4,
      '# client: none found. With a dev server: { start: [npm, run, dev, --, --port, "{port}"], url: http://127.0.0.1:5173, flow: ..., fixtureData: true }',
    );
  }
  return `${out.join('\n')}\n`;
}

/** A starter flow: open the page and capture it, named by its title, or by path and element without one. */
export function renderStarterFlow(i: Inspection): string {
  // Where the app is served (a Vite `base`): the flow starts there.
  const start = i.client?.readyPath ?? '/';
  const expect = i.title ? { title: i.title, selector: 'body' } : { path: start, selector: 'body' };
  return [
    `# The flow caseloop drives in Chromium for ${i.id} (docs/target-repositories.md).`,
    '# Make it show what a report is about: the steps a user takes, what they should then see, and a',
    '# capture of it. Every capture names the page it must be looking at: by title, or, for a page',
    '# without <title>, by path and an element that must be visible.',
    'steps:',
    `  - goto: ${inline(start)}`,
    '  - waitFor: { selector: body }',
    '  # - click: "#add"',
    '  # - expectText: { selector: "#total", text: "3" }',
    '  - capture:',
    '      name: start-page',
    `      expect: ${inline(expect)}`,
    '      fullPage: true',
    '',
  ].join('\n');
}
