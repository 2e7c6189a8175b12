import { admit, ConsoleAccess } from './console-access';
import { CookieSealer } from './signed-cookie';

const TOKEN = 'discord-user-token-abcdef';

describe('sealed cookie values', () => {
  it('opens only what it sealed, under the same secret', () => {
    const sealer = new CookieSealer('a'.repeat(40));
    const sealed = sealer.seal(TOKEN);
    expect(sealed).not.toContain(TOKEN);
    expect(sealer.seal(TOKEN)).not.toBe(sealed);
    expect(sealer.open(sealed)).toBe(TOKEN);
    expect(new CookieSealer('b'.repeat(40)).open(sealed)).toBeNull();
    const flipped = Buffer.from(sealed, 'base64url');
    flipped[flipped.length - 1] = (flipped[flipped.length - 1] as number) ^ 1;
    expect(sealer.open(flipped.toString('base64url'))).toBeNull();
    expect(sealer.open('short')).toBeNull();
    expect(sealer.open(undefined)).toBeNull();
  });
});

describe('who the console admits', () => {
  const access: ConsoleAccess = { guildId: '1', reviewers: ['4'], consoleRoles: ['7'] };

  it('admits nobody who is not a member of the guild (memberRoles null), reviewer or not', () => {
    expect(admit(access, '4', null)).toEqual({ admitted: false });
    expect(admit(access, '3', null)).toEqual({ admitted: false });
    expect(admit(access, '4', [])).toEqual({ admitted: true, as: 'reviewer' });
    expect(admit(access, '3', ['7'])).toEqual({ admitted: true, as: 'role' });
    expect(admit(access, '3', ['8'])).toEqual({ admitted: false });
  });
});
