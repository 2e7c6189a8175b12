import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { heldOutSplit } from '@caseloop/identity';
import { z } from 'zod';

/**
 * The real-report corpus: paraphrases of public tracker threads (see corpus/README.md). Each report
 * carries its source thread for provenance and the duplicate group its maintainers put it in.
 * `evidence` says how the group is known: `maintainer` (closed or linked as a duplicate by a
 * maintainer), `thread` (a reporter adding their own case to the same thread), `inferred` (same
 * error text, version and window as a maintainer-closed group, not closed by them).
 */
export const corpusReportSchema = z.object({
  id: z.string().min(1),
  product: z.string().min(1),
  group: z.string().min(3),
  evidence: z.enum(['maintainer', 'thread', 'inferred']),
  created: z.string().regex(/^\d{4}-\d\d-\d\dT/),
  source: z.string().url(),
  text: z.string().min(10).max(4000),
});
export type CorpusReport = z.infer<typeof corpusReportSchema>;

export const CORPUS_DIR = join(__dirname, 'corpus');

export type Split = 'tune' | 'heldout';

/**
 * A channel is where a team's reports arrive: one product, or a community of small related ones
 * (Home Assistant integrations, Obsidian plugins). Reports are replayed channel by channel, as the
 * coordinator sees them, so two products' identical error texts never count as a wrong link. The
 * family is the part of a group before '/'; families not listed are their own channel.
 */
const CHANNELS: Readonly<Record<string, string>> = {
  ...Object.fromEntries(
    ['xg3', 'omv', 'lgess', 'niko', 'hacore', 'skoda', 'afval', 'ecur', 'bluecon'].map((f) => [
      f,
      'home-assistant',
    ]),
  ),
  ...Object.fromEntries(
    [
      'matter',
      'fleeting',
      'autojournal',
      'headingsync',
      'omnivore',
      'ncsync',
      'onedrive',
      'peerdraft',
      'gdrive',
    ].map((f) => [f, 'obsidian']),
  ),
  ...Object.fromEntries(
    ['ghd', 'antares', 'caprine', 'irccloud', 'dimmer', 'godmode', 'electron'].map((f) => [
      f,
      'electron-apps',
    ]),
  ),
  ...Object.fromEntries(
    [
      'octal',
      'sc',
      'minimo',
      'flexify',
      'ccl',
      'gramophone',
      'cookbook',
      'duppy',
      'launchnow',
      'discreet',
    ].map((f) => [f, 'mobile-apps']),
  ),
  ...Object.fromEntries(['astro', 'lspconfig', 'nvim', 'lualine', 'moaid', 'tiny'].map((f) => [f, 'neovim'])),
  ...Object.fromEntries(['compose', 'demo', 'sdwd', 'dlabs', 'odk'].map((f) => [f, 'docker'])),
  ...Object.fromEntries(['djsbot', 'djsmeme', 'tmuxdc'].map((f) => [f, 'discord-bots'])),
  ...Object.fromEntries(['prisma', 'prisma1', 'studio', 'wasp'].map((f) => [f, 'prisma'])),
  ...Object.fromEntries(['vite', 'inspector', 'cva', 'vize', 'vue'].map((f) => [f, 'vite'])),
  ...Object.fromEntries(['fl', 'admob', 'devfolio'].map((f) => [f, 'flutter'])),
  ...Object.fromEntries(['ra', 'anyhow'].map((f) => [f, 'rust-analyzer'])),
  ...Object.fromEntries(['gd', 'orch'].map((f) => [f, 'godot'])),
  ...Object.fromEntries(['ncd', 'occ'].map((f) => [f, 'nextcloud'])),
  ...Object.fromEntries(['jfw', 'jf', 'jfk'].map((f) => [f, 'jellyfin'])),
  ...Object.fromEntries(['signal', 'signalcopr', 'signalflat'].map((f) => [f, 'signal'])),
  ...Object.fromEntries(['st', 'stcli'].map((f) => [f, 'syncthing'])),
  ...Object.fromEntries(['nodeossl', 'esm'].map((f) => [f, 'node-tooling'])),
  ...Object.fromEntries(['pnpmlock', 'pnpm'].map((f) => [f, 'pnpm'])),
  ...Object.fromEntries(['dupl', 'duplicati'].map((f) => [f, 'duplicati'])),
  ...Object.fromEntries(
    ['mo', 'vulkanrt', 'openbve', 'swyh', 'yuview', 'safedisc', 'litrl', 'killerpdf'].map((f) => [
      f,
      'windows-installers',
    ]),
  ),
  ...Object.fromEntries(['nootedred', 'qs', 'mos', 'thaw', 'buster'].map((f) => [f, 'macos-apps'])),
  ...Object.fromEntries(['cs', 'fb', 'abacus', 'pretix', 'sda'].map((f) => [f, 'web-logins'])),
  ...Object.fromEntries(
    [
      'quickreply',
      'raven',
      'manexim',
      'zulip',
      'appflowy',
      't3code',
      'sentryforum',
      'scoutplan',
      'soupcan',
      'updatescanner',
      'docsafterdark',
      'zelf',
    ].map((f) => [f, 'dark-mode']),
  ),
  ...Object.fromEntries(
    ['mapswipe', 'gotify', 'onesignal', 'fluffy', 'fetlife', 'safe', 'pulse', 'nlistener', 'irssi'].map(
      (f) => [f, 'android-push'],
    ),
  ),
  ...Object.fromEntries(
    [
      'gmailbadge',
      'stravakudos',
      'httpse',
      'marinara',
      'defaultwtf',
      'worddisc',
      'newtab',
      'jirashortcut',
      'kittens',
      'myext',
      'extshare',
    ].map((f) => [f, 'chrome-extensions']),
  ),
  ...Object.fromEntries(
    ['pyupdirs', 'pipupgrade', 'caffeine', 'indico', 'whapa', 'instalooter', 'pyg', 'netbox'].map((f) => [
      f,
      'python-tools',
    ]),
  ),
};

export const channelOf = (group: string): string => {
  const family = group.split('/')[0] as string;
  return CHANNELS[family] ?? family;
};

/**
 * The split unit is the channel, so a held-out report never shares a channel (a product) with
 * tuning data: the held-out figures are what a new team would see on its own history. FNV-1a of
 * the channel name, 40 % held out; fixed before any tuning and never changed to move a figure.
 */
export const splitOfChannel = (channel: string): Split => heldOutSplit(channel);

export const splitOf = (group: string): Split => splitOfChannel(channelOf(group));

function readJsonl<T>(file: string, schema: z.ZodType<T>): T[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .map((l, i) => [l, i] as const)
    .filter(([l]) => l.trim())
    .map(([l, i]) => {
      const r = schema.safeParse(JSON.parse(l));
      if (!r.success) throw new Error(`${file}:${i + 1}: ${r.error.message}`);
      return r.data;
    });
}

export function loadCorpus(dir = CORPUS_DIR): CorpusReport[] {
  const out: CorpusReport[] = [];
  const seen = new Set<string>();
  for (const f of readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl') && !f.startsWith('triage'))
    .sort()) {
    for (const r of readJsonl(join(dir, f), corpusReportSchema)) {
      if (seen.has(r.id)) throw new Error(`${f}: duplicate id ${r.id}`);
      seen.add(r.id);
      out.push(r);
    }
  }
  return out;
}

export const supplies = z.enum(['environment', 'expected', 'actual', 'impact', 'evidence']);
export type Supplied = z.infer<typeof supplies>;

/**
 * The triage set: a report, and the reporter's replies in its thread. `supplies` labels what each
 * message gives a developer; the report's label is what it already had before anyone asked.
 */
export const triageItemSchema = z.object({
  id: z.string().min(1),
  product: z.string().min(1),
  source: z.string().url(),
  report: z.object({
    text: z.string().min(5),
    attachments: z.number().int().min(0).default(0),
    supplies: z.array(supplies),
  }),
  replies: z.array(
    z.object({
      text: z.string().min(1),
      attachments: z.number().int().min(0).default(0),
      supplies: z.array(supplies),
    }),
  ),
});
export type TriageItem = z.infer<typeof triageItemSchema>;

export function loadTriage(dir = CORPUS_DIR): TriageItem[] {
  return readdirSync(dir)
    .filter((f) => f.startsWith('triage') && f.endsWith('.jsonl'))
    .sort()
    .flatMap((f) => readJsonl(join(dir, f), triageItemSchema));
}

/** Triage items are split by their product the same way. */
export const triageSplitOf = (item: TriageItem): Split => splitOfChannel(item.product);
