'use strict';

const { MempoolFollower } = require('./follower');

/** At most one line on stderr per this many ms while the node keeps failing the follower. */
const SAY_EVERY_MS = 10000;

/**
 * The mempool follower as `sync --follow` runs it beside the block sync: started when the sync
 * first catches up with the node (before that the mempool spends blocks the index does not
 * have yet), woken whenever a pass ends at a new tip (so the snapshot of that tip follows the
 * block within one poll, not a poll interval later), its polls logged and measured.
 *
 * @param {object} opts
 * @param {import('../stores/abstract').AbstractStore} opts.store
 * @param {import('../node/client').NodeClient} opts.client
 * @param {import('../chain/networks').Network} opts.network
 * @param {number} [opts.pollMs] default the follower's (2000)
 * @param {number} [opts.maxBytes] default the follower's (300 MB; --mempool-max-mb)
 * @param {import('../ops/metrics').Metrics|null} [opts.metrics]
 * @param {import('pino').Logger} [opts.logger]
 * @param {(line: string) => void} [opts.say] a line on stderr
 * @param {(err: Error) => void} [opts.onFatal] the follower stopped on an error it cannot pass
 * @returns {{follower: MempoolFollower, update: (p: import('../sync/service').SyncProgress) => void,
 *   beforeReorgCommit: () => Promise<void>, onBlock: (hash: string, raw: Buffer) => void, stop: () => Promise<void>}}
 *   update: a SyncService progress observer; beforeReorgCommit, onBlock: SyncService's hooks
 *   of those names (a poll against the reorg's new tip, stored in the reorg's commit; the
 *   blocks the sync applies once the follower runs, which it then need not ask the node for);
 *   stop: ends the follower and rejects with the error that stopped it, if one did
 */
function followMempool({ store, client, network, pollMs, maxBytes, metrics = null, logger = null, say = () => {}, onFatal = () => {} }) {
  let failure = null;
  let starting = null;
  let tipHash = null;
  let written = 0;
  let lastSaid = 0;
  const fail = (err) => {
    // the node client's signal aborted: the process is stopping, nothing failed
    if (err.code === 'ERR_ABORTED') return;
    if (!failure) failure = err;
    onFatal(err);
  };
  const follower = new MempoolFollower({
    store, client, network, pollMs, maxBytes,
    onPoll: (r) => {
      if (metrics) {
        metrics.mempoolFollowerPoll.observe(r.ms / 1000);
        metrics.mempoolFollowerTxs.set(r.txs);
        metrics.mempoolFollowerBytes.set(r.memBytes);
        if (r.evicted) metrics.mempoolEvicted.inc(r.evicted);
        // the stored snapshot's size: what it wrote, or what it resolved again unchanged
        if (r.outcome === 'written' || r.outcome === 'unchanged') {
          metrics.mempoolTxs.set(r.txs);
          metrics.mempoolVsize.set(r.vsize);
        }
      }
      if (r.outcome !== 'written') return;
      const fields = { seq: r.seq, tip: r.tip, txs: r.txs, vsize: r.vsize, bytes: r.bytes, added: r.added, removed: r.removed, ms: r.ms, busyMs: Math.round(r.busyMs) };
      if (written++ === 0) {
        say(`mempool: ${r.txs} transaction(s), ${r.vsize} vB, from the node's ${r.listed}; snapshot ${r.seq} written in ${r.ms} ms`);
        if (logger) logger.info(fields, 'mempool snapshot');
      } else if (logger) {
        logger.debug(fields, 'mempool snapshot');
      }
    },
    onError: (err, fatal) => {
      if (logger) logger[fatal ? 'error' : 'warn']({ code: err.code, err: err.message }, 'mempool follower');
      if (fatal) {
        fail(err);
        return;
      }
      if (Date.now() - lastSaid < SAY_EVERY_MS) return;
      lastSaid = Date.now();
      say(`mempool: ${err.message}${err.code === 'ERR_NODE_UNAVAILABLE' ? '; the stored snapshot stays, polling again' : ''}`);
    },
  });
  return {
    follower,
    update(p) {
      if (p.phase !== 'caught-up') return;
      if (!starting) {
        tipHash = p.hash;
        starting = follower.start().catch(fail);
      } else if (p.hash !== tipHash) {
        tipHash = p.hash;
        follower.wake();
      }
    },
    onBlock(hash, raw) {
      // not while the sync catches up: the follower starts at its end
      if (starting) follower.offerBlock(hash, raw);
    },
    async beforeReorgCommit() {
      if (!starting || failure) return;
      await starting;
      try {
        await follower.poll();
      } catch (err) {
        // the reorg commits all the same; the follower's loop polls again and reports
        if (logger) logger.warn({ code: err.code, err: err.message }, 'mempool follower: the poll of the reorg\'s commit failed');
      }
    },
    async stop() {
      if (starting) {
        await starting;
        await follower.stop();
      }
      if (failure) throw failure;
    },
  };
}

module.exports = { followMempool };
