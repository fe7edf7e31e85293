'use strict';

/**
 * Every metric addrindex exports, one line each: its key (how code reaches it:
 * `metrics.httpRequests`), Prometheus name, help text, and where it lives.
 *
 * `scopes` says which processes create it at start (so it reads 0 before anything happened;
 * `metrics.ensure(key)` creates one outside its scopes, as the LMDB readings are only where
 * the store is LMDB):
 *   api      each HTTP worker of `serve` (and an in-process ApiApp)
 *   primary  the primary of `serve`
 *   sync     `sync --metrics-port`
 * `aggregator` says how the primary of `serve` merges the workers' values into one (prom-client's
 * aggregators: sum by default; `max` for readings every worker takes of the same thing, such as
 * the index's tip, so N workers do not report N times the height).
 *
 * Adding a metric is one line here and the call that sets it, e.g. the mempool's size:
 *   mempoolTxs: gauge('addrindex_mempool_txs', '…', ['api', 'sync'], { aggregator: 'max' }),
 *   … metrics.mempoolTxs.set(view.txs.length);
 */

/** Request latency buckets (seconds): 1 ms … 10 s, dense where the API's answers are. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Batch and commit buckets (seconds): a commit takes milliseconds to seconds. */
const BATCH_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

const counter = (name, help, scopes, opts = {}) => ({ type: 'counter', name, help, scopes, ...opts });
const gauge = (name, help, scopes, opts = {}) => ({ type: 'gauge', name, help, scopes, ...opts });
const histogram = (name, help, scopes, opts = {}) => ({ type: 'histogram', name, help, scopes, ...opts });

const CATALOG = Object.freeze({
  // --- the REST API (every worker; summed over workers) -----------------------------------
  httpRequests: counter('addrindex_http_requests_total', 'HTTP requests answered, by route pattern ("none": no route matched), method and status', ['api'], { labelNames: ['route', 'method', 'status'] }),
  httpDuration: histogram('addrindex_http_request_duration_seconds', 'time from the request to the last byte of its answer handed to the socket', ['api'], { labelNames: ['route', 'method'], buckets: LATENCY_BUCKETS }),
  httpBodyBytes: counter('addrindex_http_body_bytes_total', 'answer bytes before content encoding, by the encoding sent', ['api'], { labelNames: ['encoding'] }),
  httpSentBytes: counter('addrindex_http_sent_bytes_total', 'answer bytes after content encoding (what went on the wire, headers aside)', ['api'], { labelNames: ['encoding'] }),
  httpRateLimited: counter('addrindex_http_rate_limited_total', 'requests refused with 429 by the per-client rate limit', ['api']),
  // --- the index and the node it follows ---------------------------------------------------
  indexTip: gauge('addrindex_index_tip_height', 'height of the index\'s committed tip (-1: empty)', ['api', 'sync'], { aggregator: 'max' }),
  nodeTip: gauge('addrindex_node_tip_height', 'height of the node\'s best chain as last read (-1: not known)', ['primary', 'sync'], { aggregator: 'max' }),
  indexLag: gauge('addrindex_index_lag_blocks', 'blocks the index is behind the node (-1: not known, no node or not read yet)', ['api', 'sync'], { aggregator: 'max' }),
  nodeErrors: counter('addrindex_node_errors_total', 'failed reads of the node (its blocks dir, or its RPC once a node source feeds this), by error code', ['primary', 'sync'], { labelNames: ['code'] }),
  lmdbMapBytes: gauge('addrindex_lmdb_map_size_bytes', 'LMDB map size reserved (address space, not disk)', [], { aggregator: 'max' }),
  lmdbUsedBytes: gauge('addrindex_lmdb_used_bytes', 'LMDB pages in use up to the last page written, in bytes', [], { aggregator: 'max' }),
  // --- the cluster (primary of serve) --------------------------------------------------------
  workers: gauge('addrindex_workers', 'HTTP worker processes alive', ['primary']),
  workerRestarts: counter('addrindex_worker_restarts_total', 'workers that died and were replaced', ['primary']),
  workersReporting: gauge('addrindex_metrics_workers_reporting', 'workers whose metrics are in this scrape (the others did not answer in time)', ['primary']),
  // --- sync ----------------------------------------------------------------------------------
  syncBlocks: counter('addrindex_sync_blocks_total', 'blocks applied since the process started', ['sync']),
  syncTxs: counter('addrindex_sync_txs_total', 'transactions applied since the process started', ['sync']),
  syncBytes: counter('addrindex_sync_bytes_total', 'raw block bytes applied since the process started', ['sync']),
  syncBlockRate: gauge('addrindex_sync_blocks_per_second', 'blocks applied per second over the last 20 s (0 when idle)', ['sync']),
  syncTxRate: gauge('addrindex_sync_txs_per_second', 'transactions applied per second over the last 20 s (0 when idle)', ['sync']),
  syncBatch: histogram('addrindex_sync_batch_seconds', 'one batch: prevout lookups, deltas and the commit', ['sync'], { buckets: BATCH_BUCKETS }),
  syncCommit: histogram('addrindex_sync_commit_seconds', 'one batch\'s atomic commit to the store', ['sync'], { buckets: BATCH_BUCKETS }),
  syncReorgs: counter('addrindex_sync_reorgs_total', 'reorgs followed (reverts to a fork point)', ['sync']),
  syncReverted: counter('addrindex_sync_reverted_blocks_total', 'blocks reverted by reorgs', ['sync']),
  syncCaughtUp: gauge('addrindex_sync_caught_up', '1 when the last pass reached the block source\'s tip, else 0', ['sync']),
  syncPrefetched: gauge('addrindex_sync_prefetched_batches', 'batches whose reads the LMDB prefetcher made ahead of the writer', ['sync']),
  // --- the mempool -----------------------------------------------------------------------------
  mempoolTxs: gauge('addrindex_mempool_txs', 'transactions in the mempool snapshot that goes with the index\'s tip (serve: what the answers hold; sync: what the follower stored)', ['api', 'sync'], { aggregator: 'max' }),
  mempoolVsize: gauge('addrindex_mempool_vsize_bytes', 'virtual size (vbytes) of those transactions', ['api', 'sync'], { aggregator: 'max' }),
  // --- the mempool follower (sync --follow with a node) -----------------------------------------
  mempoolFollowerTxs: gauge('addrindex_mempool_follower_txs', 'transactions in the mempool snapshot the follower last resolved', ['sync']),
  mempoolEvicted: counter('addrindex_mempool_evicted_total', 'transactions the follower evicted past --mempool-max-mb (the lowest fee-rate packages, as Bitcoin Core trims its mempool)', ['sync']),
  mempoolFollowerBytes: gauge('addrindex_mempool_follower_memory_bytes', 'what the transactions the follower holds take in its memory (estimated; --mempool-max-mb bounds it)', ['sync']),
  mempoolFollowerPoll: histogram('addrindex_mempool_follower_poll_seconds', 'one poll of the node\'s mempool: list, fetch, resolve, and the write of what changed', ['sync'], { buckets: LATENCY_BUCKETS }),
});

module.exports = { CATALOG, LATENCY_BUCKETS, BATCH_BUCKETS };
