// A consumer of the published types: compiled (not run) by test/lib/entry.test.js with --strict.
import * as addrindex from '../../../index';
import { AbstractStore, Summary, HistoryEntry, Stats, StoreError, SyncService, BlocksDirSource } from '../../../index';

async function main(): Promise<void> {
  const store: AbstractStore = await addrindex.openStore({ store: 'lmdb', datadir: '/tmp/x', network: 'main', readOnly: false });
  const tip = await store.getTip();
  const height: number = tip ? tip.height : -1;
  const { scripthash } = addrindex.parseTarget('1Q2TWHE3GMdB6BZKafqwxXtWAWgFt5Jvm3', 'main');
  const s: Summary | null = await store.getSummary(scripthash);
  const page = await store.getHistories([scripthash], { limit: 10, order: 'desc' });
  const first: HistoryEntry | undefined = page.entries[0];
  const st: Stats = await store.stats();
  const rows: number = st.tables.account ? st.tables.account.rows : 0;
  const source = new BlocksDirSource({ dir: '/tmp/blocks', network: addrindex.getNetwork('main') });
  const sync = new SyncService({ source, store, network: 'main', onProgress: (p) => p.phase });
  const endpoint = addrindex.resolveEndpoint({ rpcUrl: 'http://u:p@127.0.0.1:8332', network: 'main', env: {} });
  if (endpoint) {
    const client = addrindex.NodeClient.fromEndpoint(endpoint, { retryMs: 1000 });
    const fromNode = new addrindex.NodeSource({ client, network: 'main' });
    const both = new addrindex.CombinedSource({ dir: '/tmp/blocks', client, network: 'main' });
    const { tip: nodeTip } = await fromNode.scan();
    await new SyncService({ source: both, store, network: 'main' }).run({ follow: true });
    console.log(nodeTip.height, fromNode.nodeUrl, client.display);
  }
  const named = addrindex.openSource({ network: 'main', blocksDir: '/tmp/blocks', rpcUrl: 'http://u:p@127.0.0.1:8332', env: {}, retryMs: 5000 });
  await new SyncService({ source: named, store, network: 'main', bulkBatches: 8 }).run();
  await store.beginBulk();
  await store.endBulk({ commit: false });
  const result = await sync.run({ follow: false });
  const err: unknown = null;
  if (err instanceof StoreError && err.code === 'ERR_WRONG_NETWORK') return;
  const app = new addrindex.ApiApp({
    store, network: 'main', storeKind: 'lmdb', indexKeepsBlocks: store.keepsTransactions, nodeConfigured: true, maxLag: 2,
    compression: { minBytes: 2048, encodings: ['br'] }, rateLimit: { limit: 100, windowMs: 1000 }, cors: ['*'],
  });
  app.setNodeTip({ height: 439, hash: '00'.repeat(32) });
  const server = addrindex.createServer(app);
  await addrindex.closeGracefully(server, app);
  const node = addrindex.resolveEndpoint({ rpcUrl: 'http://u:p@127.0.0.1:8332', network: 'main' });
  if (node) {
    const client = addrindex.NodeClient.fromEndpoint(node, { retryMs: 10000 });
    const follower = new addrindex.MempoolFollower({ store, client, network: 'main', pollMs: 2000, onPoll: (p) => p.txs });
    await follower.start();
    const poll: addrindex.MempoolPoll = await follower.poll();
    const fees: Record<string, number> = await new addrindex.FeeEstimator(client).estimates();
    await follower.stop();
    console.log(poll.outcome, fees['6'], follower.seq);
  }
  console.log(height, s && s.balance, first && first.txid.length, rows, result.txs, addrindex.READ_METHODS.length);
}

void main;
