'use strict';

/**
 * server.*: identification, negotiation, features. Handlers get the call's context
 * ({app, session}) and the bound arguments.
 */
module.exports = {
  'server.version': {
    // the protocol has the server tolerate extra arguments here, so newer clients can add some
    params: [{ name: 'client_name', type: 'any', default: '' }, { name: 'protocol_version', type: 'any', default: null }],
    ignoreExtra: true,
    handler: ({ app, session }, clientName, requested) => session.negotiate(clientName, requested, app.serverVersion),
  },
  'server.features': {
    params: [],
    handler: ({ app }) => app.features(),
  },
  'server.ping': {
    params: [],
    handler: () => null,
  },
  'server.banner': {
    params: [],
    handler: ({ app }) => app.banner,
  },
  'server.donation_address': {
    params: [],
    handler: ({ app }) => app.donationAddress,
  },
  // No peer discovery: this server announces no other servers (ElectrumX without peers does the same).
  'server.peers.subscribe': {
    params: [],
    handler: () => [],
  },
};
