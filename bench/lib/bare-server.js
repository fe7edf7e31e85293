'use strict';

/**
 * The baseline of bench/api.js: node:http returning one fixed JSON body, with nothing else,
 * in the same cluster layout as `addrindex serve` (N workers sharing the port through
 * node:cluster), so the ratio measures the API's own cost per request.
 *
 *   node bench/lib/bare-server.js WORKERS BODY_FILE   → prints "listening on http://127.0.0.1:PORT"
 */

const cluster = require('node:cluster');
const fs = require('node:fs');
const http = require('node:http');

if (cluster.isPrimary) {
  const workers = Number(process.argv[2] || 1);
  let ready = 0;
  for (let i = 0; i < workers; i++) {
    const w = cluster.fork();
    w.on('message', (msg) => {
      if (msg && msg.port && ++ready === workers) process.stdout.write(`listening on http://127.0.0.1:${msg.port}\n`);
    });
  }
  const stop = () => {
    for (const w of Object.values(cluster.workers)) w.kill('SIGTERM');
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
} else {
  const body = fs.readFileSync(process.argv[3]);
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
    res.end(body);
  });
  server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
}
