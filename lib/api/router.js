'use strict';

/**
 * A path router over URL segments: literal segments and `:name` parameters. Lookup walks a
 * small tree, literal children first, so a request costs a few Map gets whatever the number
 * of routes. It tells "no such path" (404) from "path exists, other methods" (405 + Allow).
 */
class Router {
  constructor() {
    this.root = newNode();
    /** @type {Array<{method: string, pattern: string, meta: object}>} */
    this.routes = [];
  }

  /**
   * @param {string} method GET or POST (a GET route also answers HEAD)
   * @param {string} pattern e.g. "/api/v1/address/:address/history"
   * @param {Function} handler
   * @param {object} [meta] route options (e.g. {body: true} to read a request body first)
   */
  add(method, pattern, handler, meta = {}) {
    let node = this.root;
    const names = [];
    for (const seg of split(pattern)) {
      if (seg.startsWith(':')) {
        if (!node.param) node.param = newNode();
        node = node.param;
        names.push(seg.slice(1));
      } else {
        if (!node.literal.has(seg)) node.literal.set(seg, newNode());
        node = node.literal.get(seg);
      }
    }
    if (node.methods.has(method)) throw new Error(`route ${method} ${pattern} is defined twice`);
    node.methods.set(method, { handler, names, meta, pattern });
    this.routes.push({ method, pattern, meta });
    return this;
  }

  /**
   * @param {string} method
   * @param {string} path the URL path, still percent-encoded
   * @returns {{route: {handler: Function, meta: object, pattern: string}, params: Record<string, string>}
   *   | {allowed: string[]} | null} null: no route has this path
   * @throws {URIError} a segment with broken percent-encoding
   */
  match(method, path) {
    const segs = split(path);
    const values = [];
    const node = walk(this.root, segs, 0, values);
    if (!node) return null;
    const m = method === 'HEAD' && !node.methods.has('HEAD') ? 'GET' : method;
    const route = node.methods.get(m);
    if (!route) {
      const allowed = [...node.methods.keys()];
      if (allowed.includes('GET')) allowed.push('HEAD');
      return { allowed };
    }
    const params = {};
    for (let i = 0; i < route.names.length; i++) params[route.names[i]] = decodeURIComponent(values[i]);
    return { route, params };
  }
}

function newNode() {
  return { literal: new Map(), param: null, methods: new Map() };
}

function split(path) {
  // "/a/b" → ["a", "b"]; "/" → []; an empty segment ("/a//b", "/a/") is kept, so it matches nothing
  return path === '/' ? [] : path.slice(1).split('/');
}

function walk(node, segs, i, values) {
  if (i === segs.length) return node.methods.size ? node : null;
  const seg = segs[i];
  const lit = node.literal.get(seg);
  if (lit) {
    const found = walk(lit, segs, i + 1, values);
    if (found) return found;
  }
  if (node.param && seg !== '') {
    values.push(seg);
    const found = walk(node.param, segs, i + 1, values);
    if (found) return found;
    values.pop();
  }
  return null;
}

module.exports = { Router };
