import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { draft } from '@caseloop/contracts';
import { eventually } from '@caseloop/testing';
import { IntakeHarness, StartedIntake } from '../../test/intake.fixture';

jest.setTimeout(120_000);

const REV = 'b'.repeat(40);
const png = (bytes: number) => Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.alloc(bytes)]);

describe('the proof inline on the receipt', () => {
  let h: IntakeHarness;
  let intake: StartedIntake;
  let server: Server;
  let base: string;
  const shots = new Map<string, Buffer>();

  beforeAll(async () => {
    // The evidence service's stable link: a 302 to the bytes, as it redirects to a presigned URL.
    server = createServer((req, res) => {
      const url = req.url ?? '';
      if (url.startsWith('/evidence/')) return void res.writeHead(302, { Location: `/s3${url}` }).end();
      const data = shots.get(url.replace('/s3/evidence/', ''));
      if (!data) return void res.writeHead(404).end();
      res.writeHead(200, { 'Content-Type': 'image/png', 'Content-Length': data.length }).end(data);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    h = await IntakeHarness.create();
    intake = await h.start({ maxAttachmentBytes: 4096 });
  });
  afterAll(async () => {
    await h?.cleanup();
    await new Promise((r) => server.close(r));
  });

  async function receipt(caseId: string, data: Buffer) {
    const sha = createHash('sha256').update(data).digest('hex');
    const key = `cases/${caseId}/${REV}/${sha}`;
    shots.set(key, data);
    const m = h.discord.say({ authorId: h.ids.alice, channelId: h.ids.bugs, content: `report ${caseId}` });
    await eventually(async () => (await h.sourceEvents(m.id)).length === 2, { what: 'recorded' });
    const rendered = `**caseloop receipt** R-${caseId}\nScreenshot: <${base}/evidence/${key}>`;
    await h.appendCase(caseId, 'evidence', [
      draft('ReceiptBuilt', {
        receiptId: `R-${caseId}`,
        taskId: 'T01',
        revision: REV,
        outcome: 'pr_ready',
        checks: [],
        client: { flow: 'checkout', outcome: 'passed', captureIds: [] },
        evidence: [{ key, sha256: sha, kind: 'screenshot', shareable: true }],
        residualRisk: 'none known',
        humanAction: 'review',
        rendered,
        builtAt: new Date().toISOString(),
      }),
    ]);
    await intake.runtime.onDeliveryRequested(
      await h.requestDelivery({
        caseId,
        deliveryId: `receipt-${caseId}`,
        message: m,
        kind: 'receipt',
        receiptId: `R-${caseId}`,
        content: rendered,
      }),
    );
    return { m, sha, key };
  }

  it('attaches the reviewed screenshot as an image (multipart, attachments named), the link kept', async () => {
    const data = png(1000);
    const { m, sha } = await receipt('C01SHOT', data);
    const [post] = h.botPosts(m.id);
    expect(post?.attachments).toHaveLength(1);
    expect(post?.attachments[0]).toMatchObject({ contentType: 'image/png', size: data.length });
    expect(post?.attachments[0]?.filename).toBe(`capture-${sha.slice(0, 12)}.png`);
    const served = Buffer.from(await (await fetch(post?.attachments[0]?.url as string)).arrayBuffer());
    expect(served.equals(data)).toBe(true);
    const request = h.discord.requests.find(
      (r) => r.method === 'POST' && r.path === `/channels/${m.id}/messages`,
    );
    expect(request?.body).toMatchObject({
      attachments: [{ id: 0, filename: post?.attachments[0]?.filename }],
    });
    expect(post?.content).toContain('/evidence/');
    expect(post?.components).toHaveLength(1);
  });

  it('where the bot may not attach files (403 50013), the receipt is posted once without the image, the link kept', async () => {
    h.discord.setPermissionOverwrite(h.ids.bugs, { roleId: h.discord.botRoleId, deny: ['ATTACH_FILES'] });
    try {
      const { m } = await receipt('C01NOATTACH', png(1000));
      const posts = h.botPosts(m.id);
      expect(posts).toHaveLength(1);
      expect(posts[0]?.attachments).toEqual([]);
      expect(posts[0]?.content).toContain('/evidence/');
      expect(posts[0]?.components).toHaveLength(1);
      const tries = h.discord.requests
        .filter((r) => r.method === 'POST' && r.path === `/channels/${m.id}/messages`)
        .map((r) => [r.status, Boolean((r.body as { files?: unknown[] }).files?.length)]);
      expect(tries).toEqual([
        [403, true],
        [200, false],
      ]);
      const events = (await h.caseEvents('C01NOATTACH')).map((e) => e.type);
      expect(events).toContain('DeliveryConfirmed');
      expect(events).not.toContain('DeliveryRefused');
    } finally {
      h.discord.deletePermissionOverwrite(h.ids.bugs, h.discord.botRoleId);
    }
  });

  it('a capture over the size limit stays a link, nothing attached', async () => {
    const { m } = await receipt('C01BIG', png(8000));
    const [post] = h.botPosts(m.id);
    expect(post?.attachments).toEqual([]);
    expect(post?.content).toContain('/evidence/');
  });
});
