import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { bootstrapService, RunningService } from '@caseloop/platform';
import { eventually, LocalS3, NATS_URL, startLocalS3 } from '@caseloop/testing';
import { evidenceConfig, EvidenceConfig } from './evidence.config';
import { EvidenceModule } from './evidence.module';
import {
  caseWorktree,
  checkOutput,
  checksCompleted,
  EvidenceHarness,
  evidenceHarness,
  taskAssigned,
} from './validation/evidence.test-fixture';

jest.setTimeout(120_000);

const SECRET = 'xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOpQrStUvWx';

describe('the evidence service, booted: consumer, storage and reviewer links', () => {
  let h: EvidenceHarness;
  let svc: RunningService<EvidenceConfig>;
  let restartedS3: LocalS3 | null = null;

  beforeAll(async () => {
    h = await evidenceHarness();
    const secret = async (name: string, value: string) => {
      const file = join(h.root, name);
      await writeFile(file, value);
      await chmod(file, 0o600);
      return file;
    };
    const repositories = join(h.root, 'repositories.yaml');
    await writeFile(
      repositories,
      [
        'repositories:',
        '  - id: shop',
        `    url: ${h.remote}`,
        '    targetBranch: main',
        '    checks:',
        '      - { name: focused, kind: focused_test, command: ["true"], timeoutMs: 1000 }',
        '',
      ].join('\n'),
    );
    svc = await bootstrapService({
      name: 'evidence',
      config: evidenceConfig,
      module: (c) => EvidenceModule.forRoot(c),
      env: {
        CASELOOP_NAMESPACE: h.namespace,
        LEDGER_STREAM: `T${h.namespace.toUpperCase()}`,
        NATS_URL,
        HTTP_PORT: '0',
        HTTP_HOST: '127.0.0.1',
        LOG_LEVEL: 'silent',
        EVIDENCE_REPOSITORIES_FILE: repositories,
        EVIDENCE_DIR: h.evidenceDir,
        EVIDENCE_S3_ENDPOINT: h.s3.endpoint,
        EVIDENCE_S3_BUCKET: h.artifacts.bucket,
        EVIDENCE_S3_ACCESS_KEY_ID_FILE: await secret('s3-key-id', h.s3.accessKeyId),
        EVIDENCE_S3_SECRET_ACCESS_KEY_FILE: await secret('s3-secret', h.s3.secretAccessKey),
        EVIDENCE_PUBLIC_URL: 'http://evidence.test',
      },
    });
  });
  afterAll(async () => {
    await svc?.close();
    await restartedS3?.close();
    await h?.cleanup();
  });

  it('is healthy and consuming', async () => {
    const res = await fetch(`${svc.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      service: 'evidence',
      status: 'ready',
      transport: { state: 'consuming' },
    });
  });

  it('turns a passing check run into a receipt whose links redirect to short-lived presigned links', async () => {
    const caseId = 'C01JEVIDENCESERVICE000000000';
    const wt = await caseWorktree(h.worktreesDir, caseId, { 'a.txt': 'one\n' }, { 'a.txt': 'two\n' });
    const sha = await checkOutput(h, caseId, wt.revision, `ok 1\nSLACK_TOKEN=${SECRET}\n`);
    await h.append(caseId, 'coordinator', 'svc-assign', [taskAssigned('T9', 'shop')]);
    await h.append(caseId, 'worker', 'svc-checks', [
      checksCompleted('T9', wt.revision, wt.base, [{ name: 'focused', sha256: sha }]),
    ]);

    const receipt = await eventually(
      async () => (await h.events(caseId)).find((e) => e.type === 'ReceiptBuilt'),
      { timeoutMs: 60_000, what: 'ReceiptBuilt' },
    );
    if (receipt?.type !== 'ReceiptBuilt') throw new Error('unreachable');
    expect(receipt.data.outcome).toBe('pr_ready');
    const log = receipt.data.evidence.find((e) => e.kind === 'check_log');
    if (!log) throw new Error('no check log in the receipt');
    const stable = `http://evidence.test/evidence/${log.key}`;
    expect(receipt.data.rendered).toContain(`<${stable}>`);
    expect(receipt.data.rendered).not.toContain(SECRET);

    const res = await fetch(stable.replace('http://evidence.test', svc.url), { redirect: 'manual' });
    expect(res.status).toBe(302);
    const presigned = res.headers.get('location') ?? '';
    expect(presigned.startsWith(h.s3.endpoint)).toBe(true);
    expect(presigned).toContain('X-Amz-Expires=900');
    const body = await (await fetch(presigned)).text();
    expect(body).toContain('ok 1');
    expect(body).toContain('[redacted:slack_token]');
    expect(body).not.toContain(SECRET);

    const unknown = `${svc.url}/evidence/cases/${caseId}/${wt.revision}/${'0'.repeat(64)}`;
    expect((await fetch(unknown, { redirect: 'manual' })).status).toBe(404);
  });

  it('waits out an object-store outage: nothing built on missing evidence, nothing dead-lettered, the receipt once it is back', async () => {
    const caseId = 'C01JEVIDENCES3OUTAGE00000000';
    const wt = await caseWorktree(h.worktreesDir, caseId, { 'a.txt': 'one\n' }, { 'a.txt': 'three\n' });
    const sha = await checkOutput(h, caseId, wt.revision, 'ok 1\n');
    // The store goes away (its files stay, as a restarted server's would).
    await h.s3.close();
    await h.append(caseId, 'coordinator', 's3-assign', [taskAssigned('T10', 'shop')]);
    await h.append(caseId, 'worker', 's3-checks', [
      checksCompleted('T10', wt.revision, wt.base, [{ name: 'focused', sha256: sha }]),
    ]);
    await new Promise((r) => setTimeout(r, 6_000));
    const during = await h.events(caseId);
    expect(during.map((e) => e.type)).not.toContain('ReceiptBuilt');
    expect(during.map((e) => e.type)).not.toContain('BlockerRaised');
    const health = await (await fetch(`${svc.url}/healthz`)).json();
    expect(health).toMatchObject({ status: 'ready', transport: { state: 'consuming' } });

    restartedS3 = await startLocalS3({ dir: h.s3.dir, port: h.s3.port });
    const receipt = await eventually(
      async () => (await h.events(caseId)).find((e) => e.type === 'ReceiptBuilt'),
      { timeoutMs: 90_000, what: 'ReceiptBuilt after the store came back' },
    );
    if (receipt?.type !== 'ReceiptBuilt') throw new Error('unreachable');
    expect(receipt.data.outcome).toBe('pr_ready');
    expect((await h.events(caseId)).filter((e) => e.type === 'ReceiptBuilt')).toHaveLength(1);
    const log = receipt.data.evidence.find((e) => e.kind === 'check_log');
    expect(log?.key).toBeTruthy();
    expect((await h.artifacts.read(log!.key)).toString()).toContain('ok 1');
  });
});
