import { computePermissions, type PermissionOverwrite } from '@caseloop/discord-sandbox';
import { PermissionFlagsBits as P } from 'discord.js';
import { assess, channelPermissions, describeReport, type PermissionInputs } from './bot-permissions';
import type { DiscordOverwrite } from './discord.rest';

const GUILD = '100000000000000001';
const BOT = '100000000000000002';
const ROLE_A = '100000000000000003';
const ROLE_B = '100000000000000004';
const OWNER = '100000000000000009';
const str = (b: bigint) => b.toString();

const inputs = (over: Partial<PermissionInputs> = {}): PermissionInputs => ({
  guildId: GUILD,
  ownerId: OWNER,
  roles: [
    { id: GUILD, name: '@everyone', permissions: str(P.ViewChannel | P.SendMessages) },
    { id: ROLE_A, name: 'a', permissions: str(P.AddReactions | P.AttachFiles) },
    { id: ROLE_B, name: 'b', permissions: str(P.EmbedLinks) },
  ],
  member: { id: BOT, roleIds: [ROLE_A, ROLE_B] },
  overwrites: [],
  ...over,
});
const ow = (id: string, type: 0 | 1, allow: bigint, deny: bigint): DiscordOverwrite => ({
  id,
  type,
  allow: str(allow),
  deny: str(deny),
});

describe("the bot's channel permissions, as Discord documents the computation", () => {
  it('ORs @everyone and the member roles; the owner and ADMINISTRATOR hold everything, past any overwrite', () => {
    expect(channelPermissions(inputs())).toBe(
      P.ViewChannel | P.SendMessages | P.AddReactions | P.AttachFiles | P.EmbedLinks,
    );
    const denyAll = [ow(BOT, 1, 0n, P.ViewChannel | P.SendMessages)];
    expect(channelPermissions(inputs({ ownerId: BOT, overwrites: denyAll })) & P.ViewChannel).toBe(
      P.ViewChannel,
    );
    const admin = inputs({
      roles: [
        ...inputs().roles,
        { id: '100000000000000005', name: 'admin', permissions: str(P.Administrator) },
      ],
      member: { id: BOT, roleIds: [ROLE_A, '100000000000000005'] },
      overwrites: denyAll,
    });
    expect(channelPermissions(admin) & P.SendMessages).toBe(P.SendMessages);
  });

  it('role overwrites combine before applying: one role allowing beats another denying; the member overwrite wins', () => {
    const roles = [ow(ROLE_A, 0, 0n, P.AddReactions), ow(ROLE_B, 0, P.AddReactions, 0n)];
    expect(channelPermissions(inputs({ overwrites: roles })) & P.AddReactions).toBe(P.AddReactions);
    const member = [...roles, ow(BOT, 1, 0n, P.AddReactions)];
    expect(channelPermissions(inputs({ overwrites: member })) & P.AddReactions).toBe(0n);
    // @everyone's channel deny removes a right a role grants guild-wide, unless a role overwrite allows it.
    const everyone = [ow(GUILD, 0, 0n, P.AttachFiles)];
    expect(channelPermissions(inputs({ overwrites: everyone })) & P.AttachFiles).toBe(0n);
    // An overwrite for a role the member lacks, or a member overwrite typed as a role, does nothing.
    const foreign = [ow('100000000000000007', 0, 0n, P.SendMessages), ow(BOT, 0, 0n, P.SendMessages)];
    expect(channelPermissions(inputs({ overwrites: foreign })) & P.SendMessages).toBe(P.SendMessages);
  });

  it('names what is missing in Discord’s words, and what Discord ignores without VIEW_CHANNEL or SEND_MESSAGES', () => {
    const r = assess('200000000000000001', 'bugs', P.ViewChannel | P.AttachFiles | P.EmbedLinks);
    expect(describeReport(r)).toBe(
      'permissions: #bugs (200000000000000001) missing SEND_MESSAGES, SEND_MESSAGES_IN_THREADS, CREATE_PUBLIC_THREADS, READ_MESSAGE_HISTORY, ADD_REACTIONS; without SEND_MESSAGES Discord also ignores ATTACH_FILES, EMBED_LINKS',
    );
    expect(describeReport(assess('2', null, P.SendMessages))).toContain(
      'missing VIEW_CHANNEL, SEND_MESSAGES_IN_THREADS, CREATE_PUBLIC_THREADS, READ_MESSAGE_HISTORY, ADD_REACTIONS, ATTACH_FILES, EMBED_LINKS; without VIEW_CHANNEL Discord also ignores SEND_MESSAGES',
    );
  });

  it('agrees with the local Discord’s own computation on 2,000 random guilds (seeded)', () => {
    let seed = 20261202;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const bits = [
      P.ViewChannel,
      P.SendMessages,
      P.AddReactions,
      P.AttachFiles,
      P.EmbedLinks,
      P.Administrator,
    ];
    const pick = () => bits.filter(() => rnd() < 0.3).reduce((a, b) => a | b, 0n);
    const ids = [GUILD, ROLE_A, ROLE_B, '100000000000000006'];
    for (let n = 0; n < 2000; n++) {
      const roles = ids.map((id) => ({ id, name: id, permissions: str(pick()) }));
      const roleIds = ids.slice(1).filter(() => rnd() < 0.5);
      const overwrites = [...ids, BOT]
        .filter(() => rnd() < 0.5)
        .map((id) => ow(id, id === BOT ? 1 : 0, pick(), pick()));
      const ownerId = rnd() < 0.05 ? BOT : OWNER;
      const ours = channelPermissions({
        guildId: GUILD,
        ownerId,
        roles,
        member: { id: BOT, roleIds },
        overwrites,
      });
      const theirs = computePermissions(
        {
          guildId: GUILD,
          ownerId,
          rolePermissions: (id) => {
            const r = roles.find((x) => x.id === id);
            return r ? BigInt(r.permissions) : undefined;
          },
        },
        { id: BOT, roleIds },
        new Map<string, PermissionOverwrite>(
          overwrites.map((o) => [
            o.id,
            { id: o.id, type: o.type, allow: BigInt(o.allow), deny: BigInt(o.deny) },
          ]),
        ),
      );
      const mask = bits.reduce((a, b) => a | b, 0n);
      expect([n, ours & mask]).toEqual([n, theirs & mask]);
    }
  });
});
