import { readinessField } from '@caseloop/contracts';
import { extractSignatures } from '@caseloop/identity';

/** The fields a report needs before it is actionable: one list, the contract's. */
export const READINESS_FIELDS = readinessField.options;
export type ReadinessField = (typeof READINESS_FIELDS)[number];

export interface ChannelRoute {
  channelId: string;
  /** The repository id (from the repositories file) reports in this channel are about. */
  repository: string | null;
  owner: string | null;
}

export interface ReadinessInput {
  /** Sanitized source texts of the case, oldest first. */
  texts: readonly string[];
  attachments: number;
  keptRatio: number;
  route: ChannelRoute | null;
  /** Configured repository ids: a reply naming one settles the owner. */
  repositories: readonly { id: string; owner: string }[];
  /** The classification says the case is a regression: "it used to work" is the expected behaviour. */
  regression: boolean;
}

export interface ReadinessResult {
  /** What blocks the case (empty when a developer could start); soft fields ride along when non-empty. */
  missing: ReadinessField[];
  /** Everything not found, soft fields included. */
  unknown: ReadinessField[];
  found: Partial<Record<ReadinessField, string>>;
  owner: string | null;
  repository: string | null;
}

/** A word, a number or a version like 1.0.10: runs of text inside one sentence may hold versions. */
const SPAN = (max: number): string => `(?:[^.\\n]|\\.(?=\\d)){0,${max}}`;

const ENV = new RegExp(
  [
    // Platforms, devices and browsers, with a version fused on or not ("Android12", "Win7", "iOS 15").
    String.raw`\b(ios|ipados|android|iphone|ipad|pixel|galaxy|samsung|xperia|oneplus|xiaomi|huawei|motorola|windows|win ?(xp|7|8|8\.1|10|11)|mac ?os|os ?x|macbook|linux|ubuntu|debian|fedora|arch linux|chrome ?os|chrome|chromium|firefox|safari|edge|opera|brave|vivaldi)(\s?\d+(\.\d+)*)?\b`,
    String.raw`\b(docker|wsl2?|kubernetes|k8s|raspberry ?pi( ?\d)?|raspbian|linux mint|manjaro|centos|rhel|alpine|opensuse|freebsd|steam ?deck|nvidia|geforce|radeon|java ?\d+|jdk ?\d*|\.net( core| framework)? ?\d|dotnet ?\d)\b`,
    // The time zone and the hardware it runs on: "GMT+2", "Europe/Berlin", "GTX 1080", "1080ti", "Ryzen 7".
    String.raw`\b(gmt|utc)\s?[+-]\s?\d{1,2}\b|\b(Africa|America|Asia|Atlantic|Australia|Europe|Pacific)\/[A-Z][a-z_]+|\b(gtx|rtx|rx|gt)\s?\d{3,4}\b|\b\d{3,4}\s?(ti|super)\b|\b(ryzen|threadripper|core i[3579]|i[3579]-\d{4,5}\w*|apple m[1-4]|snapdragon|exynos)\b`,
    String.raw`\b(lenovo|thinkpad|dell|asus|acer|msi|nokia|oppo|vivo|realme|redmi|poco|zte|fairphone|nexus|moto ?[a-z]?\d*|surface (pro|laptop|go)|chromebook|kindle|fire ?tv|shield tv|roku|apple tv|smart ?tv|xbox|playstation|ps[345]|nintendo switch)\b`,
    // Short and misspelt forms and home servers: "v.2.1", "andriod 12", "FF 115", "on my mac", "synology", "proxmox vm".
    String.raw`\bv\.\s?\d+(\.\d+)+\b|\bandr[oi]{2}d\b|\bff ?\d{2,3}\b|\b(on|using) (a |the |my )?mac\b|\b(synology|qnap|unraid|truenas|proxmox|esxi|vmware|virtualbox|hyper-v|termux|fire ?stick|chromecast|android tv|podman|portainer|lxc)\b`,
    // Phone makers' Android skins and custom systems: "MIUI's power saving", "One UI 6", "LineageOS".
    String.raw`\b(miui|hyperos|oxygen ?os|color ?os|emui|magic ?os|funtouch ?os|lineage ?os|graphene ?os|calyx ?os|one ?ui ?\d+(\.\d+)?)\b`,
    // The desktop, the package it came as and how it is served: "KDE on Wayland", "the flatpak", "self-hosted behind nginx".
    String.raw`\b(kde|plasma|gnome|xfce|cinnamon|wayland|x11|xorg|flatpak|appimage|homebrew|f-?droid|play store|app store|testflight|self-?hosted|reverse proxy|nginx|apache|caddy|traefik)\b|\b(via|from|using|the|as a) snap\b`,
    String.raw`\b(browser|desktop app|mobile app|web app|app version|node ?\d+|python ?3|prod(uction)?|staging|x64|x86|amd64|arm64|(32|64)[- ]bit)\b`,
    String.raw`\b(on|my|from|using|with) (an? |the )?(?!(same|other|another|any)\b)(\w+ )?(phone|tablet|laptop|smartphone)\b|\bmobile (mode|view|device|browser|web)\b`,
    // "Environment:", "OS:", "Device:", "Version:" headings, and "version 2.0".
    String.raw`(^|\n)[\s*#>-]*(environment|platform|os|device|browser|versions?|build|device information|system info\w*)\b[*\s]*[:\n]`,
    String.raw`\b(version|ver\.?|release|build)\s*v?\d+(\.\d+)*\b`,
    String.raw`\b(on|using|running|with|from|to)\s+v?\d+\.\d+(\.\d+)*\b(?!\s*(%|mb|gb|kb|ms|s\b|seconds?|minutes?|hours?|days?))`,
    // What the reporter runs, named: "I'm using Yiistrap with it", "we are on Postgres".
    String.raw`\b(i'?m|i am|we'?re|we are)\s+(using|running|on)\s+[A-Z][\w.-]+`,
    // A full version a screen or store shows: "the store says 2.5.1.1 but in game it shows 2.5.1.0".
    String.raw`\b(says|shows|showing|reads|displays)\s+v?\d+\.\d+\.\d+(\.\d+)?\b`,
  ].join('|'),
  'im',
);
/**
 * The release a reporter runs, named by its channel ("the beta build", "nightly channel"): read
 * outside questions, since "is it fixed in the beta build?" says nothing of theirs. "The latest
 * release" names no release.
 */
const CHANNEL =
  /\b(beta|nightly|canary|insider|dev|stable|preview)\s+(version|release|build|channel|update)\b/i;
/** A model code or a version given alone in a short reply: "s22u", "2.6", "A52 with 4.1". */
const isModelOrVersion = (token: string): boolean =>
  /^v?\d+(\.\d+)+$/i.test(token) ||
  (/^([a-z]{1,3}\d{1,4}[a-z]{0,3}|\d{1,4}[a-z]{1,3})$/i.test(token) &&
    !/^(mp[34]|[hx]26[45]|\d+(st|nd|rd|th|mb|gb|kb|tb|ms|px|fps|hz|khz|mhz|ghz|k|p|s|x|h|m|min|sec|am|pm))$/i.test(
      token,
    ));
const terseEnvironment = (text: string): boolean => {
  const words = text.trim().split(/\s+/);
  return (
    words.length <= 6 &&
    !text.includes('?') &&
    // "error E1234" is the software's code and "IP 10.0.0.7" an address, not a model or version;
    // "2.5 seconds" or "1.5 GB" is a measure.
    words.some(
      (w, i) =>
        isModelOrVersion(w.replace(/^[(]|[,.;:!)]+$/g, '')) &&
        !/^(error|err|code|exit|status|ip|ipv4|address|addr)$/i.test(words[i - 1] ?? '') &&
        !/^(s|secs?|seconds?|mins?|minutes?|ms|h|hours?|days?|gb|mb|kb|tb|%|x|times|fps|px)\b/i.test(
          words[i + 1] ?? '',
        ),
    )
  );
};
/** A date (31.1.2021): not a version. */
const DATE = /\b\d{1,2}\.\d{1,2}\.(19|20)\d{2}\b/g;
/** A name with its version: "SPMC 16.5 RC1", "Kodi 17.1", "Nova 1.0.1.8" (the name capitalised, as names are). */
const NAMED_VERSION = /\b(?!IP\b|IPv\d)[A-Z][\w-]+\s+v?\d+\.\d+(\.\d+)*(\s?(rc|beta|alpha)\s?\d*)?\b/;
/** Headings that name a field, as bug templates and careful reporters write them. */
const HEADING = (words: string): RegExp =>
  new RegExp(String.raw`(^|\n)[\s*#>-]*(${words})\b\??[*\s]*(:|\n|-\s)`, 'i');
/** Template hints left in place: "(Describe actual behavior here)", "[e.g. chrome, safari]". */
const PLACEHOLDER =
  /\((describe|explain|add|provide|a clear|what|if applicable|paste|include)\b[^)\n]*\)|\[(e\.g\.|first step|second step|and so on|description)[^\]\n]*\]|^\s*(a clear and concise description|if applicable, add)[^\n]*$/gim;
/**
 * The words template sections are headed with, whatever the field: a line under one heading that
 * starts with another ("Screenshots attached" under an empty "Expected behavior") belongs to the next.
 */
const ANY_HEADING =
  /^(expected|actual|current|observed|steps?|to reproduce|how to reproduce|reproduction|screenshots?|logs?|crash logs?|relevant log|environment|platform|os|device|browser|versions?|build|system|smartphone|desktop|additional|describe|what happen|possible solution)\b/i;
/**
 * What a section holds, when it holds nothing: a bare list marker ("1."), another heading (a
 * markdown "##" line, a line ending in ":" or starting with a heading word), a question back
 * ("where do I get this from?") or a negative answer ("none", "n/a", "don't think it will help").
 */
const EMPTY_SECTION = (raw: string): boolean => {
  const line = raw.replace(/[*_`>]/g, '').trim();
  return (
    /^#/.test(line) ||
    /^(\d+[.)]|[-•])?\s*$/.test(line) ||
    line.endsWith(':') ||
    /^[^.!?]*\?$/.test(line) ||
    ANY_HEADING.test(line) ||
    /^(no|none|nope|nothing|not|n\/?a|don'?t|do not|-)\b/i.test(line)
  );
};
/** The text without its section heading lines: "Expected behavior" names a field, it says nothing. */
const withoutHeadings = (text: string): string =>
  text
    .replace(PLACEHOLDER, '')
    .split('\n')
    .filter((l) => {
      const line = l.replace(/[*_`>]/g, '').trim();
      if (/^#/.test(line)) return false;
      return !(/^[\w /'?-]{1,40}:?$/.test(line) && ANY_HEADING.test(line) && line.split(/\s+/).length <= 5);
    })
    .join('\n');
/** A heading that has something under it: not only a template hint or the next heading. */
function headed(text: string, heading: RegExp): boolean {
  const clean = text.replace(PLACEHOLDER, '');
  for (const m of clean.matchAll(new RegExp(heading.source, 'gi'))) {
    const first = clean
      .slice((m.index ?? 0) + m[0].length)
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l.replace(/[*#>_`]/g, '').trim().length > 0);
    if (first !== undefined && !EMPTY_SECTION(first)) return true;
  }
  return false;
}
const EXPECTED_HEADING = HEADING(
  String.raw`expected( behaviou?r| result| outcome)?|what do (we|you|i) expect`,
);
const ACTUAL_HEADING = HEADING(
  String.raw`actual( behaviou?r| result| outcome)?|current behaviou?r|observed( behaviou?r)?|what happen(s|ed)|problem(atic behaviou?r)?|describe the bug`,
);
/** A question that says how the thing ought to behave: "shouldn't it show the list?". */
const RHETORICAL =
  /\b(should(n'?t)?|is(n'?t)? it (not )?supposed to|would(n'?t)?)\s+(it|this|that|they|the \w+)\s+(\w+ly\s+)?(?!be (a|an|some|any)\b)\w+/i;
const EXPECTED = new RegExp(
  [
    // "should" says what ought to happen; "what should I do?" asks for help.
    String.raw`\b(expected|expect|should(n'?t)?(?!\s+(i|we)\b)|supposed to|instead of|used to|docs say|documented|meant to|want(ed)? to|downgrad\w*|roll(ed|ing)? back|last working)\b`,
    // Misspelt and non-native forms: "i excpected", "shud", "it must show the list", "normaly it shows",
    // "in old version it work", "Before it show the list".
    String.raw`\b(e[xs]+c?pe?c?ted|shud|shoud|shold|sould)\b|\bmust (show|be|work|open|display|keep|have|load|stay|let|allow|save|send|sync)\b|\bnormall?y,?\s+(it|the \w+|this|i|we)\b|\bin (the )?(old|older|previous|last|earlier) (version|release|build|update)s?\b|(^|[.!?]\s+)before,? (it|this|that|they|the \w+) (show|showed|work|worked|was|were|did|had|kept|let|display|displayed|open|opened|load|loaded|save|saved)\b`,
    // A wish or the usual behaviour: "I'd expect the list to keep its order", "normally it opens at once".
    String.raw`\b(want|wanted|need|needed|would like|'d like)\s+(it|the \w+|this|that|them)\s+to\b|\b(would|'d)\s+(like|love|expect|want|prefer)\b(?!\s+to\s+(know|ask|understand|learn|find out|hear|check|report|mention|say|thank)\b)|\b(would|'d) be (really |very |so |super |much )?(useful|nice|great|good|helpful|handy|better) (\([^)\n]{0,40}\) )?(if|to have)\b|\b[A-Z]\w+ (shows?|displays?|handles?|plays?|opens?) (it|them|this|these|those)\s+(once|correctly|properly|fine|right)\b|\b(the )?(stock|other|default|native|official|built-in)\s+(\w+\s+)?(app|calendar|client|browser|player|viewer|reader)\b[^.\n]{0,30}\b(shows?|works?|handles?|displays?|plays?|opens?|reads?)\b|\bought to\b|\b(normally|usually),?\s+(it|the \w+|this|that|they|i|we|you)\b`,
    // Where it still works: another version, device or mode ("11.0 works well", "Kodi 17 has no stuttering").
    String.raw`(?<!\b(don'?t|doesn'?t|didn'?t|does not|do not|did not|won'?t|never|not|no longer)\s)\b(works?|worked|working|starts?|loads?|opens?|runs?|ran|plays?|downloads?|syncs?|installs?|log(s|ged)? in|connects?|prints?|sends?|saves?|boots?|launch(es)?|renders?|displays?|shows? up)\s+(just\s+|really\s+|still\s+)?(reliably|consistently|fine|well|great|perfectly|flawlessly|normally|correctly|ok|okay|as expected|as it should)\b`,
    // A version that ran: "uninstalled, installed 52.0, which ran".
    String.raw`\bv?\d+(\.\d+)+,?\s+(which|and (that|this|it)) (ran|worked|started|loaded|launched|booted|opened)\b`,
    // Working every time somewhere: "on my iPhone DNS works every time I connect" (a window that "opens every time" is a symptom).
    String.raw`(?<!\b(don'?t|doesn'?t|didn'?t|does not|do not|did not|won'?t|never|not|no longer)\s)\b(works?|worked|connects?|connected|syncs?|synced)\s+(just\s+)?(every time|each time|all the time|always|without fail)\b`,
    // "works for the forum", not "it did work for a moment".
    String.raw`(?<!\b(doesn'?t|don'?t|didn'?t|does not|do not|did not|won'?t|never|not)\s)\b(works?|worked) (fine |perfectly )?(in|on|with|for)\b(?!\s+(a|an|some|several|\d+|the first)\s+(moment|while|sec|second|minute|bit|few|couple|day|time|hour|week)s?\b)|\bworked (before|fine|in|on)\b`,
    // It was fine up to a change: "I had data until I updated OPNsense".
    String.raw`\buntil (i|we|it|they|the \w+)\s+(was |were )?(updat|upgrad|install|switch|chang|migrat)\w*`,
    // A version or branch that does not show it: "the current master doesn't crash".
    String.raw`\b(master|main|nightly|beta|stable|older|previous|earlier|latest|current|old)( \w+)? (doesn'?t|does not|didn'?t|did not|won'?t|never) (crash|freez|hang|happen|stutter|lag|fail)\w*`,
    String.raw`\b(with|without) (any )?(issues?|problems?|errors?)\b(?!\s+messages?)|\b(has|had|there (is|was)) no (issues?|problems?|errors?(?!\s+messages?)|crash\w*|stutter\w*|lag\w*)\b`,
    String.raw`\b(doesn'?t|does not|didn'?t|did not) happen (with|in|on|when)\b`,
    // It is fine somewhere, or was before: "the Android app is fine", "this never happened before".
    String.raw`\b(is|are|was|were|seems?|looks?)\s+(all\s+)?(fine|ok|okay|normal|unaffected)\b|\bnever\b[^.\n]{0,30}\bbefore\b`,
    // Where it does not occur: "after a fresh install the problem does not occur".
    String.raw`\b(doesn'?t|does not|didn'?t|did not|won'?t|never)\s+(occur|happen|reproduce)s?\b(?!\s+(any ?more|again|now)\b)`,
    // It does the right thing somewhere: "the clock shows the right time", "with the launcher from the site, audio works."
    String.raw`\b(\w+s|has|had|is|are|at|in|all) the (right|correct|proper) \w+|\b(both|each|all of them|everything)\b[^.\n]{0,30}\b(worked|was working|were working)\b|\b(over|via|with|on|in|using|from) (an? |the |my )?[\w-]+,? (it|this|that) (works|worked)\b|(?<!\b(it|that|this|everything|all|now|not|never|doesn'?t|didn'?t|does not|did not|won'?t|longer|none of (them|these|those|it))\s)\b(works|worked)(\s+(too|as well|there|again))?\s*([.;!)]|$)`,
    // Anything done fine: "a different video exported fine the day before".
    String.raw`\b\w+(ed|s)\s+(just\s+|really\s+)?(fine|flawlessly|perfectly)\b(?!\s+now\b)`,
    // What it did before a change or in another version: "before the update it kept my place",
    // "the old app kept the draft", "in 2.3 it kept the draft".
    String.raw`\bbefore (the|this|that|an?|last|yesterday'?s)?\s*(update|upgrade|change|release|version|redesign|migration)\b|\b(was|were) always (\w+ed|kept|shown|done|made|left|held)\b|\b(the )?(old|previous|earlier) (version|app|ui|release|build)s?\b[^.\n]{0,30}\b(\w+ed|did|had|kept|ran|let|took|got|held|left)\b|\bin v?\d+(\.\d+)+,? (it|this|that|they)\s+(\w+ed|did|had|kept|ran|let|took|got|held|left)\b`,
    // What the reporter assumed: "I thought it would keep the draft", "ideally it would remember".
    String.raw`\b(ideally|i'?d assume|i assumed|i thought|i would have thought|i'?d have thought)\b[^.\n]{0,30}\b(would|should|will|it|to)\b|\b(correct|right|expected|proper) (\w+ )?(would be|should be)\b`,
    // It works through something else: "I can log in from Outlook and other clients".
    String.raw`\b(i|we|you) can\b[^.\n]{0,40}\b(from|with|in|on|using|through)\s+(other|another|a different|any other|the (old|web|desktop|mobile))\b`,
    String.raw`\b(go|going|went|switch\w*|revert\w*) back to\b|\breverting to\b`,
  ].join('|'),
  'i',
);
const ACTUAL = new RegExp(
  [
    String.raw`\b(error|crash\w*|panic\w*|fails?|failed|shows?|showing|displays?|returns?|returned|(gets?|got|getting)(?!\s+(this|it|that|the same)\b)|blank|stuck|freez\w*|hang\w*|nothing happens|disappear\w*|missing|wrong|broken|lost|twice|duplicat\w*|instead|doesn'?t|does not|didn'?t|did not|won'?t|can'?t|cannot|cuts? off|cut off|truncat\w*|only (shows?|has|returns?)|revert\w*|snaps? back|jumps?|reset\w*|ignores?|empty|garbled|mangled|slow|laggy|stutter\w*|flicker\w*|overlap\w*|times? out|timed out|stopped|stops|no longer|closes|quits|exits|unreadable|invisible|abnormal\w*|incorrect\w*|messed up|corrupt\w*|refus\w+ to|does nothing|did nothing|do nothing|(stays?|remains?|is|are|goes|went|turns?) (black|blank|white|empty|frozen|stuck|grey|gray)|(black|blank|white|grey|gray) (screen|window|page))\b`,
    // A negated verb is a symptom ("the reminders don't go off"), unless it is about knowing or wanting.
    String.raw`\b\d{1,3}\s?%\s?(cpu|load|usage)|\b(cpu|memory|ram|disk|gpu) (usage|load)\b|\bmemory leak|\boverheat\w*|\bheats? up\b|\bfans? (spin|run|go|roar)\w*|\b(deleted|wiped|erased|ate)\s+(all\s+)?(my|our|the|their)\b|\b(is|are)\s+still\s+(\w+ly\s+)?(insane|high|huge|slow|broken|wrong|bad|stuck|there|missing|empty|blank|black)\b|\b(mangl|garbl)\w+|\b(it|app|he|she|this|that)\s+(close|crash|freeze|hang|stop|restart|reboot|quit|exit|lag|stutter|flicker|disconnect)\b|\b(clos|shut|quit|exit)\w*\s+(alone|by itself|itself|on its own)\b|\bnot (\w+ )?any ?more\b|\bnever\s+(?!(happens?|occurs?|had|have|has)\b)\w+s\b|\bnot all (the )?\w+ (are|is|were|was) \w+|\bnone of (the \w+|them|these|those) \w+|\bnothing (at all )?happens\b|\b(flash(es|ing)|blink(s|ing)|tiny|too (small|big|large|dark|bright|slow|fast)|scrolls? (back|up|down|to)|goes negative|logs? (me|us) out|logged out|signs? (me|us) out|signed out|kicks? (me|us) out|kicked out|moves? (around|away|back))\b|(?<!\b(problem|issue|bug|error|crash|it)\s)\b(is|are|was|were)\s+gone\b`,
    String.raw`\b(an?|unhandled|uncaught|fatal)\s+exception\b|\b(disconnect\w*|drops? (out|the connection)|dropping|pauses|skips|mutes|overwrit\w+|gets? replaced|loses|losing)\b|\bno (sound|audio|video|picture|image|signal|response|output|data|connection|internet|notifications?)\b|\btakes? (about |over |more than |up to |almost )?\d+\s*(s|secs?|seconds?|mins?|minutes?|hours?)\b|\bnot be \w+ing\b`,
    String.raw`\b(don'?t|do not)\s+(?!(know|think|understand|remember|want|care|mind|need|have|see why|get why)\b)\w+`,
    // Not doing what it should: "plugin not working", "frontend look not updated", "still problem",
    // "keeps playing", a message it gives ("it says: ...").
    String.raw`\bnot\s+(?!(using|having|being|related|needed|interested|expecting|trying|asking|saying|talking|going|doing|changed|touched|modified|tested)\b)\w+(ing|ed)\b|\bstill (a |an |the )?(problem|issue|bug|broken|happening|there|occurs)\b|\bkeeps? (on )?\w+ing\b|\b(says|said|tells me|complains)\s*[:"“]`,
    // What the reporter sees or hears, and what it says: "I only see the old list", "it says invalid password".
    String.raw`\b(i|we)\s+(only\s+|just\s+|still\s+)?(see|saw|hear|heard|receive|received)\b|\b(spins?|spinning|loops?|looping|sits? there|takes? (forever|ages))\b|\b(it|this|that|which)\s+(says|said|tells me)\b`,
    // Negated states: "is not fully visible", "are not exported", "is not opening", "never arrive".
    String.raw`\b(isn'?t|aren'?t|wasn'?t|weren'?t|is not|are not|was not|were not|haven'?t|hasn'?t|never)\s+(\w+ly\s+)?(\w+(ed|en|ing)|visible|readable|possible|shown|seen|there|had|got|any)\b|\bnone of (them|these|those|the \w+)\s+\w+(ed|s)\b`,
  ].join('|'),
  'i',
);
const IMPACT =
  /\b(block\w*(?!\s+by\b)|all (our )?(users|customers)|every(one| user| customer)|whole team|our team|customers?|users? (report|are)|production|prod\b|urgent\w*|critical|data loss|lost (my|our|all|everything)|all (lost|gone)|spent (a few |several |many )?(hours|days)|security (issue|risk|problem|hole|bug)|(can'?t|cannot|can not) (work|use)|unable to|(?<!\b(no|not|not even|without|any)\s+(the\s+)?([\w-]+\s+)?)workaround(?!\s+(helps?|works?)\b|[^.\n]{0,30}\b(doesn'?t|didn'?t|does not|did not|won'?t|no longer)\s+(work|help))|locked out|annoying|painful|another user|other users|others have|(hard|awkward|difficult|impossible|cumbersome|tricky) to (read|use|hold|work( with)?|see|navigate|type|reach|tap|click|scroll)\b|unusable|not usable|all but one|gave up|give up|(stopped|stop|quit) using|users? (can'?t|cannot|are unable|have no (way|possibility|option)))\b|\b(applies to|affects|happens (to|for)) (any|all|every|each)\b|\b(have|had|need) to\b[^.\n]{0,50}\b(every time|each time|manually)\b|\b(have|need) to\b[^.\n]{0,50}\bby hand\b|\bkeep (having|needing) to\b|(?<!\bnot\s)\b(only|just) (me|us|my (account|device|phone|machine|computer|laptop))\b|\b(deleted|wiped|erased|lost)\b[^.\n]{0,15}\ball\b[^.\n]{0,15}\b(data|files|notes|photos|messages|drivers|settings)\b|\bgone for good\b|\b(lose|lost|losing)\b[^.\n]{0,30}\b(data|files|work|passwords?|messages|photos|everything)\b|\b(lose|lost|losing)\s+(\w+\s+){0,2}(hours?|days?|weeks?|months?)\s+of\b|\b(use|using|used|switched to|went back to)\b[^.\n]{0,40}\binstead\b/i;
/**
 * Who and how many it hits, what it costs, how bad it is and the workaround in use: "it affects
 * about 200 people", "our whole sales team", "costing us orders", "a showstopper", "only cosmetic",
 * "I use the web version for now".
 */
const SCOPE = new RegExp(
  [
    String.raw`\b(\d+|several|many|some|multiple|most|two|three|dozens of|hundreds of|thousands of)\s+(of (us|our \w+)|(other )?(people|users|customers|clients|employees|colleagues|staff|members|students))\b`,
    String.raw`\b(whole|entire)\s+(\w+\s+)?(team|company|office|department|organi[sz]ation|staff)\b`,
    String.raw`\b(costing|costs|cost us|losing|lose)\s+(us\s+)?(money|orders|sales|revenue|customers|time|hours|business)\b`,
    String.raw`\b(show-?stopper|deal ?breaker|blocker|severe|serious|high priority|low priority|not urgent|cosmetic|minor (issue|annoyance|problem|bug))\b`,
    String.raw`\b(i|we)\b[^.\n]{0,40}\bfor now\b|\bfor now,? ((i|we)\b|(you|one|people|users) (need|have|must|can only|'ll have)\b)`,
    // Frustration and resignation: "crashing every game got me fed up", "I'll have to live with missed texts",
    // "typing it by hand is a nightmare".
    String.raw`(?<!\b(not|never|isn'?t|wasn'?t|aren'?t)\s+)\b(fed up|frustrat(ing|ed)|infuriating|maddening|driv(es|ing) me (crazy|nuts|mad|insane)|(is|was|it'?s) (a |an absolute |a real |a total )?(nightmare|headache|hassle|chore))\b`,
    String.raw`\b(have to|has to|had to|need to|'ll|will|just|can'?t|cannot|could)\b[^.\n]{0,40}\b(live|cope|put up) with\b`,
    // Others hit too: "a colleague has the same with another tool", "2 forum posts with the same problem".
    String.raw`\b(a|my|our|another|one|two|three|several|some) (colleague|coworker|co-worker|friend|teammate|user|customer|client)s?\b[^.\n]{0,40}\b(has|have|had|sees?|saw|gets?|got|is having|are having) (the same|it too|this too)\b`,
    String.raw`\b(\d+|a few|several|many|some|other|two|three)\s+(forum |reddit )?(posts?|threads?|replies|reports|people|users|others)\b[^.\n]{0,30}\bsame (problem|issue|thing|bug|error|crash)\b`,
    // How often it strikes: "about 10 times a day".
    String.raw`\b(\d+|several|many|dozens of|a few) times (a|per|every) (day|hour|week|session|game|match)\b`,
    String.raw`\b(can'?t|cannot|unable to) (do (my|our) (job|work)|continue|proceed|finish|get (any )?work done)\b`,
    String.raw`\b(my|our) (wife|husband|partner|kids?|son|daughter|colleagues?|coworkers?|friends?|parents?|mom|dad|mother|father|boss)('s)?\b[^.\n]{0,30}\b(too|as well|also)\b|\bnot (a )?(big|huge|major) (issue|deal|problem)\b|\beasy (enough )?to (undo|fix|work around|recover|revert)\b`,
    String.raw`\b(whenever|every time|each time)\b[^.\n]{0,40}\b(have|need) to\b|\b(have|need) to\b[^.\n]{0,40}\b(whenever|every time|each time)\b`,
  ].join('|'),
  'i',
);
/** Quoted text is the software's words (an error message), not the reporter's account of impact. */
const unquoted = (text: string): string => text.replace(/"[^"\n]{0,200}"|“[^”\n]{0,200}”/g, '""');
/**
 * A question mark inside quotes is the quoted text's ("the link only says "Forgot your
 * password?""), not the writer's: it does not make their sentence a question.
 */
const quotedQuestionsOut = (text: string): string =>
  text.replace(/"[^"\n]{0,200}"|“[^”\n]{0,200}”/g, (q) => q.replace(/\?/g, ''));
const EVIDENCE =
  /\b(screenshot|screen ?shot|screen recording|trace|traceback|stack ?trace|console|network tab|devtools|har file|logcat|htop|task manager|activity monitor|resource monitor|process explorer|journalctl|dmesg|syslog|event viewer|wireshark|tcpdump|strace|crash ?dumps?|dumps?|profiler|steps to reproduce|repro|to reproduce|(?<!\b(can'?t|cannot|couldn'?t|unable to|not able to)\s)reproduce|reproducible)\b|\b(log|logs)\b(?!\s+(in|into|on|out|off)\b)(?![^.\n]{0,12}\b(are|is) (empty|missing))|\.(dmp|log|har)\b|\b(video|recording|gif)\b[^.\n]{0,20}\b(attached|below|above|here)\b|(?<!\b(can'?t|cannot|couldn'?t|unable to|not able to)\s)\breproduced\b|\bbisect\w*|\bworkaround\s*(is\b|:|-)|\b(starts?|started|begins?|began|happens?|appears?)\b[^.\n]{0,20}\bafter (a while|some time|a few \w+|\d+ \w+)\b|\b(also|still) happens (with|on|in|when|after)\b|\bcan confirm (this |it )?(on|with|in)\b|,\s*but (it|they|this|that) (does|do|did|works?|worked)\b|\bsudo \w+|\b(behaves|acts) the same\b|\bonly (happens|occurs|when|if|after)\b|\b(happens|occurs) only\b|\b(attached|pasted|uploaded|included)\b[^.\n]{0,30}\b(har|output|log|file|trace|dump|screenshot|video|recording|zip|config|report)s?\b|\b(attached|see( the)?|here('?s| is) (a|the|my))\s+(video|recording|gif)\b|^[ \t]*\d[.)][ \t]+\S|^\s*\d\s?-\s+\S|(^|\n|[.;:]\s*)\s*(steps?|how to reproduce|str)\s*[:-]/im;
const EVIDENCE_HEADING = HEADING(
  String.raw`steps( to reproduce)?|reproduction( steps)?|how to reproduce|to reproduce|repro( steps)?|logs?|log files?|crash logs?|screenshots?`,
);
/**
 * Logs, screenshots or dumps named only as absent ("no log files", "the logs are empty"), asked
 * about ("where do I find the logs?") or promised ("I'll post the logcat later").
 */
const NO_EVIDENCE = new RegExp(
  [
    // The negation reaches as far as its clause: "crashes with no errors?? log: <link>" has a log.
    String.raw`(\bno|\bnot|n't|\bwithout|\bnever|\bnothing|\bnone)\b[^.,;:!?\n]{0,30}\b(logs?|log files?|logcat|screenshots?|dumps?)\b`,
    // Asked about after naming it ("Crash log: where do I get this from?", "any way I can send logs?")
    // or answered with a no ("Screenshots: don't think it will help").
    String.raw`\b(logs?|log files?|logcat|screenshots?|dumps?)\b[^.!?\n]{0,60}\?`,
    String.raw`\b(logs?|log files?|logcat|screenshots?|dumps?)\b\s*:\s*(no|none|nope|n\/?a|don'?t|do not|not|nothing)\b`,
    String.raw`\b(logs?|log files?)\b[^.\n]{0,12}\b(are|is) (empty|missing)\b`,
    String.raw`\b(where|how|which|what)\b[^.?\n]{0,40}\b(logs?|log files?|logcat|screenshots?|dumps?)\b[^.?\n]*\?`,
    String.raw`\b(will|'ll|going to|later)\b[^.\n]{0,20}\b(send|post|attach|share|upload|provide|get|grab|add)\b[^.\n]{0,30}\b(logs?|logcat|screenshots?|dumps?|video|recording)\b`,
  ].join('|'),
  'gi',
);
/**
 * Evidence named as present: not in a template hint, a bare heading (a heading with content is
 * read by `headed`), or words that say it is absent, asked about or still to come.
 */
const mentionsEvidence = (text: string): boolean =>
  EVIDENCE.test(
    withoutHeadings(text)
      .replace(/^[\s*#>_-]*[\w ]{1,40}[*\s]*:[*\s]*$/gm, '')
      .replace(NO_EVIDENCE, ' '),
  );
/**
 * Pasted output: a fenced block with something in it, log lines (a timestamp or a level at the
 * start) or a list of loaded modules (a crash handler's DLL list).
 */
const PASTED =
  /(^[ \t]*[\w.+-]+\.(dll|so(\.\d+)*|dylib|sys|ko)\b[^\n]*\n){2}|```[^\n]*\n[^`]*\S[^`]*```|^\s*\[?\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}|^\s*\[?\d{2}:\d{2}:\d{2}[.,\]\s]|^\s*\[?(INFO|WARN|WARNING|ERROR|DEBUG|TRACE|FATAL|E|W|I|D)\]?\s?[:/|\]]\s?\S/m;
/** What the reporter tried, or a sequence of observations: evidence a developer can act on. */
const TRIED = new RegExp(
  [
    String.raw`\b(restart\w*|reinstall\w*|reboot\w*|re-?download\w*|clear\w* (the )?(cache|data)|cleaning (the )?cache|disabl\w*|downgrad\w*|roll\w* (\w+ ){0,3}back|(after|i|we|tried|by) (updat|upgrad)\w*|switch\w* (off|on|to)|turn\w* (\w+ ){0,3}(off|on)|tried)\b${SPAN(80)}\b(didn'?t|did not|doesn'?t|does not|no|not|none|nothing|neither|same|still|always|makes? it|fix\w*|help\w*|change\w*|works?|worked|fine|ok|okay|normally|culprit|caus\w+|(in|on|with) (both|all|either|each))\b`,
    // Something the reporter did, and what it changed or did not: "I raised the limit in nginx, but the error still comes".
    String.raw`\b(i|we)\s+(also\s+|then\s+|even\s+|already\s+)?(\w+ed|set|put|ran|made|did|took|gave|rebuilt|built)\b[^.\n]{1,80}\b(but|and|yet)\b[^.\n]{0,60}\b(still|the same|nothing|no (change|difference|effect)|didn'?t|doesn'?t|did not|does not|won'?t)\b`,
    String.raw`\b(i|we)\s+(also\s+|then\s+|even\s+|already\s+)?(\w+ed|set|put|ran|made|did|took|gave|rebuilt|built)\b[^.\n]{1,100}[:;,-]\s*(still|same (result|thing|error|crash)|no (change|difference|effect))\b|\bsame (result|behaviou?r) (with|on|in|when|after|using)\b`,
    // An action named by its verb, and its effect: "renicing to -20 made no difference".
    String.raw`(^|[.!?;]\s+|\n)\s*\w+ing\b[^.\n]{0,60}\b(made no difference|no (change|difference|effect)|changed nothing|(didn'?t|did not|doesn'?t|does not) (help|change|fix)|helps|helped|fixes|fixed)\b`,
    // The same whatever was tried: "crashes whatever format I pick".
    String.raw`\b(whatever|whichever|no matter (what|which))\b[^.\n]{0,30}\b(i|we|you)\s+(pick|choose|try|use|select|set)\b`,
    // What it took to make it work: "I had to close every incognito window before it started working".
    String.raw`\b(had|have|needed|need) to\b[^.\n]{1,80}\b(before|until|to get|so that)\b[^.\n]{0,20}\b(it|the \w+)\s+(\w+\s+)?(start\w*|work\w*|load\w*|show\w*|appear\w*)`,
    // Two settings set side by side: "with the line removed I get a black screen; with it added it says ...".
    String.raw`\bwith(out)?\b[^.,;\n]{1,50}\b(removed|added|enabled|disabled|on|off|installed|uninstalled|checked|unchecked)\b,?\s+(i|it|the|they|we|this|that)\b`,
    String.raw`\b(same|still)\b${SPAN(20)}\bafter (updat|upgrad|restart|reinstall|reboot|clear)\w*`,
    String.raw`\b(did(n'?t| not)|does(n'?t| not)|won'?t)\s+(fix|help|solve|change)\b|\bnone of (them|these|it) work\w*`,
    // A condition that brings it on: "as soon as it starts downloading it crashes", "if i try to open settings".
    // What brings it on, said after the symptom: "shows up when I kill the app and launch it again".
    String.raw`\b(happens|happened|shows up|showed up|occurs|appears|comes back|starts)\s+(only\s+)?(when(ever)?|after|every time|each time|as soon as|if|once)\s+(i|you|we)\b`,
    String.raw`\b(if|when(ever)?|as soon as|once|every time) ((i|you|we)\b|\w+ing\b)${SPAN(100)}\b(it|the \w+|they|that|this)\s+(\w+\s+)?(crash\w*|fails?|freez\w*|hangs?|closes|stops|breaks|shows?|says|starts?|works?|goes|turns?|disappears?|resets?|is|are|gets?|stutters?|lags?)\b`,
    String.raw`\b(if|when(ever)?|as soon as|once|every time) ((i|you|we)\b|\w+ing\b)${SPAN(100)}\b(crash(es|ed)?|freez(es|ed)|hangs|disconnects?|drops|resets|disappears|stutters|keeps \w+ing|goes (black|blank|silent))\b`,
    // What a step changed: "after building it on a fresh install, the problem does not occur".
    String.raw`\bafter \w+ing\b${SPAN(100)}\b(it|the (problem|issue|bug|error|crash))\s+(does not|doesn'?t|did not|didn'?t|no longer|never|is gone|went away|still)\b`,
    // A command line with its flags: "when I run deno doc --html --name=index.html".
    String.raw`\b(run|running|ran|execute|executing|type|typing|call|calling)\b[^.\n]{0,40}\s--?[a-z][\w-]*`,
    String.raw`\bonce I\b|\b(day|step) \d\b\s*:|^\s*(open|go to|click|tap|start|run)\b[^.\n]{0,60}:`,
    // An action named by its verb, and what it does: "right-clicking in the field doesn't bring up the
    // menu", "opening one from the tray goes to where the app last was".
    String.raw`(^|[.!?;]\s+|,\s+and\s+|\n)\s*(?!(nothing|something|anything|everything|during|being|having|according|morning|evening|string|thing|king|ring|spring|bring|sing|wing|ceiling|feeling)\b)[a-z][\w-]{2,}ing\b[^.\n]{0,60}\b((doesn'?t|does not|didn'?t|did not|won'?t)\s+(bring|open|do|show|trigger|register|respond|paste|copy|load|start)\w*|does nothing|did nothing|goes to|went to|takes (me|you|us) to|took (me|you|us) to|brings up|brought up|leads to|jumps to)\b`,
    // The result, then what else was tried: "Cmd-V doesn't work (also tried Ctrl-V)".
    String.raw`\b(doesn'?t|don'?t|didn'?t|won'?t|not)\s+work\w*\b[^.\n?]{0,30}\b(also|even|already)\s+tried\b`,
    // Steps told in the past tense: "uninstalled, installed 52.0, then updated to 52.1"; not a fix told that way.
    String.raw`\b(installed|uninstalled|reinstalled|updated|upgraded|downgraded|restarted|rebooted|cleared|deleted|removed|disabled|enabled)\b[^.\n]{0,60}(,|;|\bthen\b)\s*(and\s+)?(then\s+)?(i\s+)?(installed|uninstalled|reinstalled|updated|upgraded|downgraded|restarted|rebooted|cleared|deleted|removed|disabled|enabled)\b(?![^.\n]*\b(now it|works now|fixed it|solved it)\b)`,
    // How far it reaches: "it's not specific to the kanji", "not only this one", "they don't work in open URL either".
    String.raw`\b(is|it'?s|isn'?t|not)\s+(not\s+)?(specific|limited|unique|exclusive|restricted) to\b|\bnot (just|only) (this|that) (one|\w+)\b|\b(doesn'?t|don'?t|didn'?t|isn'?t|aren'?t|won'?t|can'?t)\s+(\w+\s+){0,2}(in|on|with|for|from)\b[^.\n]{1,40}\beither\b`,
  ].join('|'),
  'im',
);
/**
 * Two conditions set against each other: "over USB it reports every input; over bluetooth it
 * shows up as another device", "on my iPhone it works, but on the Mac it doesn't".
 */
const CONTRAST =
  /\b(on|over|via|with|in|using)\s+(?:(?:an?|the|my|our)\s+)?([\w-]+)\b(?=[^.;\n]{0,120}?\b(?:it|i|we|they|this|that|there|the \w+)\s+(?:\w+\s+)?(?:\w+s|\w+ed|is|are|was|were|does|doesn'?t|didn'?t|can'?t|won'?t|works?|get|see)\b)[^.;\n]{3,120}[;,]\s*(?:but |while |whereas |and )?\1\s+(?:(?:an?|the|my|our)\s+)?(?!\2\b)[\w-]+/i;
/** The same verb on both sides of a "but": "birthdays appear once, but the appointments appear twice". */
const SAME_VERB_CONTRAST =
  /\b(appears?|shows?|works?|loads?|opens?|syncs?|plays?|prints?|fails?|crashe?s?)\b[^.;\n]{1,100}\bbut\b[^.;\n]{1,100}\b\1\b/i;
/** Steps written as a sequence: "open the shop, add two apples, open the cart" or "go to X > click Y". */
const STEP_SEQUENCE =
  /\b(open|go to|click|tap|add|select|enter|type|press|run|start|navigate|log ?in)\b[^.\n]{2,80}(,|;|->|→|>|\bthen\b)\s*(and\s+)?\b(open|go to|click|tap|add|select|enter|type|press|run|start|navigate|check|look|see|view)\b/i;
/** Concrete observed values set against expected ones: "€9.40 instead of €12.90", "shows 3, should be 5". */
const OBSERVED_VALUES =
  /([€$£¥]\s?\d+(?:[.,]\d+)?|\d+(?:[.,]\d+)?\s?(?:€|\$|£|%|ms|s|mb|gb|kb))[^.\n]{0,40}\b(instead of|rather than|but (?:should|expected)|not|vs\.?|versus)\b[^.\n]{0,20}([€$£¥]\s?\d|\d)/i;

/** Links to pasted logs, screenshots, recordings and files: evidence, not the page where it happens. */
const EVIDENCE_LINK =
  /https?:\/\/[^\s"'<>)]*(paste|gist\.|imgur|prnt\.sc|postimg|gyazo|dropbox|drive\.google|debuglogs|user-images|user-attachments|\/files\/|\/attachments?\/|file|upload|share|transfer|mediafire|mega\.nz)[^\s"'<>)]*|https?:\/\/[^\s"'<>)]+\.(png|jpe?g|gif|webp|mp4|mov|webm|log|txt|zip|har|dmp)\b/i;
/**
 * A clause that says the problem went away ("both start fine now", "that cleared it up", "after
 * updating the driver it works perfectly", "reinstalling fixed this one"): news of a fix, neither
 * what should happen nor a clue to the cause. A fix that lasted only a while, or broke something
 * else, is still a clue.
 */
const RESOLVED = new RegExp(
  String.raw`[^.,;:!?\n]*\b((works?|working|starts?|runs?|loads?|opens?|fine|ok|okay|great|good|solved|resolved|fixed|gone)\s+now|cleared it up|(problem|issue|it)('s| is| was)? (gone|solved|resolved)|(solved|sorted) itself( out)?` +
    String.raw`|(?<=\bafter \w+ing\b[^.,;:!?\n]{0,60})(works?|worked|runs?|ran|starts?|loads?|syncs?|boots?)\s+(just\s+)?(perfectly|fine|great|again|normally|flawlessly)` +
    String.raw`|(?<!\b(not|never|nothing|didn'?t|doesn'?t|hasn'?t|haven'?t|hadn'?t|wasn'?t|weren'?t|isn'?t|won'?t|can'?t|couldn'?t)\s+(\w+\s+)?)(fixed|solved|resolved|cured) (it|this|that|the (problem|issue|crash|bug|error))( one)?` +
    String.raw`)\b(?![^.,;:!?\n]*\b(then|until|but|for (a|some) (while|time|bit|moment|minutes?|hours?|days?)|at first|temporar\w*|partly|partially)\b)[^.,;:!?\n]*`,
  'gi',
);

/**
 * A case is actionable when a developer could start without asking anything: where it happens,
 * what was expected, what happened, who it hurts, some evidence, a clear privacy scope and an
 * owner. Each field is judged over all of the case's sources, so a reply in the thread can fill
 * in what the first report lacked.
 */
export function assessReadiness(input: ReadinessInput): ReadinessResult {
  // Phones type curly apostrophes ("doesn’t"): the patterns spell them straight.
  const text = input.texts.join('\n\n').replace(/[‘’]/g, "'");
  // A date (31.1.2021) is not a version.
  const undated = text.replace(DATE, ' ');
  const sig = extractSignatures(undated);
  const found: Partial<Record<ReadinessField, string>> = {};
  const env = undated.match(ENV) ?? undated.match(NAMED_VERSION);
  const statements = undated.replace(/[^.!?\n]*\?/g, ' ');
  const channel = statements.match(CHANNEL);
  // A reply of a few words that is only a model or a version answers "where does it happen".
  const terse = input.texts.map((t) => t.replace(DATE, ' ').trim()).find(terseEnvironment);
  if (env) found.environment = `mentions ${env[0].trim().toLowerCase()}`;
  else if (channel) found.environment = `runs the ${channel[0].toLowerCase()}`;
  else if (terse !== undefined)
    found.environment = `a short reply naming a model or version ("${terse.slice(0, 40)}")`;
  else if (sig.version.size > 0) found.environment = `version ${[...sig.version][0]}`;
  else if (
    sig.url.size > 0 &&
    [...text.matchAll(/https?:\/\/[^\s"'<>)]+/g)].some((m) => !EVIDENCE_LINK.test(m[0]))
  )
    found.environment = 'a URL of the affected page';
  // What a fix says is left out of what should happen and of what was tried.
  const settled = text.replace(RESOLVED, ' ');
  // A question back ("shouldn't there be some feedback?", "what's the right version?") asks, it
  // states nothing; one that says how the thing itself ought to behave ("shouldn't it behave the
  // same on all my phones?") still does.
  const exp = quotedQuestionsOut(withoutHeadings(settled))
    .replace(/[^.!?\n]*\?/g, (q) => (RHETORICAL.test(q) ? q : ' '))
    .match(EXPECTED);
  if (headed(text, EXPECTED_HEADING)) found.expected = 'an "Expected" section';
  else if (exp) found.expected = `says what should happen ("${exp[0].toLowerCase()}")`;
  else if (input.regression) found.expected = 'a regression: the earlier behaviour is expected';
  if (
    headed(text, ACTUAL_HEADING) ||
    ACTUAL.test(text) ||
    sig.exception.size > 0 ||
    sig.error_code.size > 0 ||
    sig.http_status.size > 0
  )
    found.actual = 'describes what happens';
  // A question back ("doesn't this hit every user?") states nothing.
  const stated = unquoted(text).replace(/[^.!?\n]*\?/g, ' ');
  const imp = stated.match(IMPACT) ?? stated.match(SCOPE);
  if (imp) found.impact = `states impact ("${imp[0].toLowerCase()}")`;
  const technical = sig.exception.size + sig.frame.size + sig.error_code.size + sig.http_status.size;
  if (input.attachments > 0) found.evidence = `${input.attachments} attachment(s)`;
  else if (technical > 0) found.evidence = 'error text, status or stack trace';
  else if (headed(text, EVIDENCE_HEADING) || STEP_SEQUENCE.test(text) || mentionsEvidence(text))
    found.evidence = 'steps, logs or screenshots';
  else if (EVIDENCE_LINK.test(text)) found.evidence = 'a link to a log, paste, screenshot or file';
  else if (PASTED.test(text)) found.evidence = 'pasted output or log lines';
  else if (TRIED.test(settled)) found.evidence = 'what was tried and what it changed';
  else if (CONTRAST.test(settled) || SAME_VERB_CONTRAST.test(settled))
    found.evidence = 'two conditions set against each other';
  else if (OBSERVED_VALUES.test(text)) found.evidence = 'the observed and the expected values';
  if (input.keptRatio >= 0.5)
    found.privacy_scope =
      input.keptRatio < 1 ? 'private parts removed; the rest is shareable' : 'nothing private found';

  let repository = input.route?.repository ?? null;
  let owner = input.route?.owner ?? null;
  if (!repository) {
    const lower = text.toLowerCase();
    const named = input.repositories.find((r) =>
      new RegExp(`(^|[^a-z0-9_-])${r.id.toLowerCase()}([^a-z0-9_-]|$)`).test(lower),
    );
    if (named) {
      repository = named.id;
      owner = owner ?? named.owner;
    }
  }
  if (repository) {
    owner = owner ?? input.repositories.find((r) => r.id === repository)?.owner ?? repository;
    found.owner = `${owner} (${repository})`;
  }
  const missing = READINESS_FIELDS.filter((f) => !(f in found));
  // Where it happens and whom it hurts help an engineer prioritise and reproduce, but a report
  // with what happens, what was expected and something to reproduce it from is enough to start
  // (the channel already names the product): they are asked for together with a field that
  // blocks, never alone.
  const blocking = missing.filter((f) => !SOFT.includes(f));
  return { missing: blocking.length > 0 ? missing : [], found, owner, repository, unknown: missing };
}

/** A readiness judgement route's verdict over the whole conversation (see libs/identity readiness.port). */
export interface ReadinessVerdict {
  /** `kind:model@name` of the route that answered. */
  route: string;
  supplied: readonly ('environment' | 'expected' | 'actual' | 'steps' | 'impact' | 'evidence')[];
}

/** The fields a judgement route decides; privacy scope and owner stay with the rules and the routes. */
const JUDGED: readonly ReadinessField[] = ['environment', 'expected', 'actual', 'impact', 'evidence'];

/**
 * The offline result with a route's verdict in place of the rules' for what the conversation
 * supplies (steps to reproduce count as evidence): a route reads what the patterns miss (other
 * words, other languages) and what they match by accident. Privacy scope and owner are unchanged.
 */
export function withJudgement(offline: ReadinessResult, verdict: ReadinessVerdict): ReadinessResult {
  const found: Partial<Record<ReadinessField, string>> = {};
  for (const f of READINESS_FIELDS) {
    if (!JUDGED.includes(f)) {
      if (offline.found[f] !== undefined) found[f] = offline.found[f];
      continue;
    }
    const supplied =
      verdict.supplied.includes(f as ReadinessVerdict['supplied'][number]) ||
      (f === 'evidence' && verdict.supplied.includes('steps'));
    if (supplied) found[f] = offline.found[f] ?? `judged supplied by ${verdict.route}`;
  }
  const missing = READINESS_FIELDS.filter((f) => !(f in found));
  const blocking = missing.filter((f) => !SOFT.includes(f));
  return { ...offline, found, missing: blocking.length > 0 ? missing : [], unknown: missing };
}

/** Fields worth asking for only when a question is going out anyway. */
export const SOFT: readonly ReadinessField[] = ['environment', 'impact'];

const ASK: Record<ReadinessField, string> = {
  environment: 'where it happens (app version, browser or OS, web/desktop/mobile)',
  expected: 'what you expected to happen',
  actual: 'what happened instead (the exact error text helps)',
  impact: 'who is affected and how badly (blocked, or is there a workaround)',
  evidence: 'a screenshot, a log excerpt or the steps to reproduce it',
  privacy_scope:
    'the problem described without customer names, credentials or personal data (we hid what looked private)',
  owner: 'which product or repository this is about',
};

/** One clear question for the reporter, covering everything still missing, in one message. */
export function clarificationQuestion(caseId: string, missing: readonly ReadinessField[]): string {
  const items = missing.map((f) => ASK[f]);
  const list =
    items.length === 1
      ? (items[0] as string)
      : `${items.slice(0, -1).join('; ')}; and ${items.at(-1) as string}`;
  return `Thanks — this is case ${caseId}. Before an engineer can pick it up, could you reply in this thread with ${list}?`;
}
