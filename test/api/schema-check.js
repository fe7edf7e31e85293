'use strict';

/**
 * A checker for the subset of JSON Schema (OpenAPI 3.1) that docs/openapi.json uses: $ref,
 * type (one or a list, "integer" distinct from "number", "null"), properties, required,
 * additionalProperties: false, items, minItems, maxItems, enum, pattern, minimum, maximum,
 * maxLength, allOf, oneOf. Anything else in a schema is an error, so the document cannot
 * grow a keyword this checker silently ignores.
 */

const KNOWN = new Set(['$ref', 'type', 'properties', 'required', 'additionalProperties', 'items', 'minItems', 'maxItems',
  'enum', 'pattern', 'minimum', 'maximum', 'maxLength', 'allOf', 'oneOf', 'description', 'default']);

function typeOf(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

/**
 * @param {unknown} value
 * @param {object} schema
 * @param {object} doc the whole OpenAPI document ($ref targets)
 * @param {string} [at] where in the value (for messages)
 * @returns {string[]} problems, empty when the value conforms
 */
function check(value, schema, doc, at = '$') {
  const errs = [];
  for (const k of Object.keys(schema)) if (!KNOWN.has(k)) errs.push(`${at}: schema keyword "${k}" is not supported by the checker`);
  if (schema.$ref) {
    const target = schema.$ref.replace(/^#\//, '').split('/').reduce((o, k) => (o ? o[k] : undefined), doc);
    if (!target) return [`${at}: unresolved $ref ${schema.$ref}`];
    return errs.concat(check(value, target, doc, at));
  }
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    const t = typeOf(value);
    if (!types.includes(t) && !(t === 'integer' && types.includes('number'))) {
      return errs.concat(`${at}: expected ${types.join('|')}, got ${t} ${JSON.stringify(value).slice(0, 60)}`);
    }
  }
  if (schema.enum && !schema.enum.some((e) => e === value)) errs.push(`${at}: ${JSON.stringify(value)} not in ${JSON.stringify(schema.enum)}`);
  if (typeof value === 'string') {
    if (schema.pattern && !new RegExp(schema.pattern).test(value)) errs.push(`${at}: "${value.slice(0, 80)}" does not match ${schema.pattern}`);
    if (schema.maxLength !== undefined && value.length > schema.maxLength) errs.push(`${at}: longer than ${schema.maxLength}`);
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) errs.push(`${at}: ${value} < ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum) errs.push(`${at}: ${value} > ${schema.maximum}`);
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems) errs.push(`${at}: fewer than ${schema.minItems} items`);
    if (schema.maxItems !== undefined && value.length > schema.maxItems) errs.push(`${at}: more than ${schema.maxItems} items`);
    if (schema.items) value.forEach((v, i) => errs.push(...check(v, schema.items, doc, `${at}[${i}]`)));
  }
  if (typeOf(value) === 'object') {
    for (const k of schema.required || []) if (!(k in value)) errs.push(`${at}: missing "${k}"`);
    const props = schema.properties || {};
    for (const [k, v] of Object.entries(value)) {
      if (props[k]) errs.push(...check(v, props[k], doc, `${at}.${k}`));
      else if (schema.additionalProperties === false) errs.push(`${at}: unexpected property "${k}"`);
    }
  }
  for (const s of schema.allOf || []) errs.push(...check(value, s, doc, at));
  if (schema.oneOf) {
    const passing = schema.oneOf.filter((s) => check(value, s, doc, at).length === 0).length;
    if (passing !== 1) errs.push(`${at}: matches ${passing} of the oneOf schemas, not exactly one`);
  }
  return errs;
}

module.exports = { check, KNOWN };
