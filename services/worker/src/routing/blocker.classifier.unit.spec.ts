import { classifyBlocker } from './blocker.classifier';

describe('environment blockers', () => {
  it.each([
    ['signing', 1, 'error: gpg failed to sign the data'],
    ['signing', 65, 'No signing certificate "iOS Development" found'],
    ['device', 1, 'adb: no devices/emulators found'],
    ['device', 1, 'error: no connected devices'],
    ['fixtures', 1, 'Error: fixture file not found: fixtures/users.json'],
    ['busy_client', 1, 'listen EADDRINUSE: address already in use :::4173'],
    ['busy_client', 75, 'try again later'],
    ['permissions', 1, "Error: EACCES: permission denied, open '/var/lib/app/db'"],
    ['permissions', 77, ''],
    ['permissions', 126, 'sh: ./gradlew: cannot execute'],
  ])('given %s in the output or exit code, then a blocker', (kind, exitCode, output) => {
    expect(classifyBlocker({ exitCode, output })).toMatchObject({ kind });
  });

  it.each([
    [1, 'Expected: 3\nReceived: 2\n  at cart.spec.ts:14'],
    [2, "src/cart.ts(4,7): error TS2322: Type 'string' is not assignable to type 'number'."],
    [null, ''],
  ])('given an ordinary failure, then no blocker: the change is at fault', (exitCode, output) => {
    expect(classifyBlocker({ exitCode, output })).toBeNull();
  });
});
