import { NatsCluster } from '../libs/testing/src/nats-cluster';
import { connect, headers, StorageType } from 'nats';
async function main() {
  const c = await NatsCluster.start({ dir: '/tmp/clx/store2' });
  const ncs = await Promise.all(c.nodes.map((n) => connect({ servers: n.url, noAsyncTraces: true })));
  const jsm = await ncs[0]!.jetstreamManager();
  await jsm.streams.add({ name: 'R', subjects: ['r.>'], num_replicas: 3, storage: StorageType.File, duplicate_window: 120e9 });
  const si0 = await jsm.streams.info('R'); const leader = si0.cluster?.leader;
  const js = ncs.map((n) => n.jetstream());
  const N = Number(process.env.N ?? 500);
  for (const mode of ['seq', 'slot']) {
    const first = await Promise.all(Array.from({ length: N }, (_, i) => js[0]!.publish(`r.${mode}.${i}`, new Uint8Array([0]))));
    const tried = [] as Promise<unknown>[];
    for (let i = 0; i < N; i++) for (let k = 0; k < 3; k++) for (let w = 0; w < 2; w++) {
      const h = headers(); h.set('Nats-Expected-Last-Subject-Sequence', String(first[i]!.seq));
      h.set('Nats-Msg-Id', mode === 'slot' ? `${mode}.${i}@${first[i]!.seq}` : `${mode}.${i}.${k}.${w}`);
      tried.push(js[k]!.publish(`r.${mode}.${i}`, new Uint8Array([k]), { headers: h }).then((a) => (a.duplicate ? 'dup' : 'ok'), (e) => 'err'));
    }
    const res = await Promise.all(tried);
    let doubles = 0;
    for (let i = 0; i < N; i++) { const r = res.slice(i * 6, i * 6 + 6); if (r.filter((x) => x === 'ok').length > 1) doubles++; }
    console.log(JSON.stringify({ mode, leader, N, doubles, ok: res.filter((x) => x === 'ok').length, dup: res.filter((x) => x === 'dup').length }));
  }
  for (const n of ncs) await n.close();
  await c.stop();
}
main().catch((e) => { console.error(e); process.exit(1); });
