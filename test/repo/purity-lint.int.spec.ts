import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

jest.setTimeout(60_000);

const root = join(__dirname, '..', '..');

/** The project's own eslint, as `npm run lint` runs it (its flat config loads only outside Jest's VM). */
async function restricted(filePath: string, code: string): Promise<string[]> {
  const run = spawnSync(
    process.execPath,
    [
      join(root, 'node_modules/eslint/bin/eslint.js'),
      '--stdin',
      '--stdin-filename',
      filePath,
      '--format',
      'json',
    ],
    { cwd: root, input: code, encoding: 'utf8' },
  );
  const [result] = JSON.parse(run.stdout) as { messages: { ruleId: string | null; message: string }[] }[];
  return (result?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('the purity lint rule', () => {
  const impure = [
    "import { readFileSync } from 'node:fs';",
    "import { Injectable } from '@nestjs/common';",
    "import { connect } from 'nats';",
    "import { EventStore } from '@caseloop/ledger';",
    'export const x = [readFileSync, Injectable, connect, EventStore];',
  ].join('\n');

  it.each([
    'services/worker/src/tasks/example.decider.ts',
    'services/coordinator/src/cases/example.workflow.ts',
    'libs/contracts/src/example.ts',
  ])('refuses framework, driver and node: imports in %s', async (file) => {
    const messages = await restricted(file, impure);
    expect(messages).toHaveLength(4);
  });

  it('allows them in adapters and handlers', async () => {
    expect(await restricted('services/worker/src/tasks/example.handler.ts', impure)).toEqual([]);
  });

  it('allows a decider its contracts and zod', async () => {
    const pure =
      "import { draft } from '@caseloop/contracts';\nimport { z } from 'zod';\nexport const y = [draft, z];\n";
    expect(await restricted('services/worker/src/tasks/example.decider.ts', pure)).toEqual([]);
  });
});
