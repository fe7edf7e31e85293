'use strict';

const { badRequest } = require('../errors');
const { toDisplayHex } = require('../../chain/hash');

/**
 * Block headers: the tip (and its notifications), one header or a run of them, optionally
 * with a merkle proof to a checkpoint height (protocol 1.4's cp_height).
 */
module.exports = {
  'blockchain.headers.subscribe': {
    // pre-1.4 clients (and @mempool/electrum-client) still send a `raw` flag: ignored, as electrs does
    params: [],
    ignoreExtra: true,
    handler: async ({ app, session }) => {
      const tip = await app.reader.tipHeader();
      if (!tip) throw badRequest('the index holds no blocks yet');
      session.headersSubscribed = true;
      return { hex: tip.header.toString('hex'), height: tip.height };
    },
  },

  'blockchain.block.header': {
    params: [{ name: 'height', type: 'uint' }, { name: 'cp_height', type: 'uint', default: 0 }],
    handler: async ({ app }, height, cpHeight) => {
      const { value } = await app.reader.consistent(async (tip) => {
        const tipHeight = tip ? tip.height : -1;
        if (height > tipHeight) throw badRequest(`height ${height} out of range`);
        const [header] = await app.reader.headers(height, 1);
        if (cpHeight === 0) return header.toString('hex');
        return { header: header.toString('hex'), ...(await proof(app, height, cpHeight, tipHeight)) };
      });
      return value;
    },
  },

  'blockchain.block.headers': {
    params: [{ name: 'start_height', type: 'uint' }, { name: 'count', type: 'uint' }, { name: 'cp_height', type: 'uint', default: 0 }],
    handler: async ({ app }, start, count, cpHeight) => {
      const max = app.limits.maxHeaders;
      const { value } = await app.reader.consistent(async (tip) => {
        const headers = await app.reader.headers(start, Math.min(count, max));
        const result = { count: headers.length, hex: Buffer.concat(headers).toString('hex'), max };
        if (headers.length && cpHeight) Object.assign(result, await proof(app, start + headers.length - 1, cpHeight, tip.height));
        return result;
      });
      return value;
    },
  },
};

/** The branch of header `height` to the root over the block hashes of 0..cpHeight. */
async function proof(app, height, cpHeight, tipHeight) {
  if (!(height <= cpHeight && cpHeight <= tipHeight)) {
    throw badRequest(`require header height ${height} <= cp_height ${cpHeight} <= chain height ${tipHeight}`);
  }
  const { branch, root } = await app.headerMerkle.branchAndRoot(cpHeight + 1, height);
  return { branch: branch.map(toDisplayHex), root: toDisplayHex(root) };
}
