'use strict';

/**
 * Just enough SVG for the benchmark charts: escaped text, axes with round ticks (linear or
 * log), bars, lines, points, a legend. Plain strings; no dependency, no DOM.
 */

const FONT = 'font-family="Helvetica, Arial, sans-serif"';
/** Colour-blind-safe palette (Okabe-Ito), then greys. */
const PALETTE = ['#0072B2', '#E69F00', '#009E73', '#D55E00', '#CC79A7', '#56B4E9', '#F0E442', '#000000', '#777777', '#BBBBBB'];

function esc(s) {
  return String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function num(x) {
  return Number.isInteger(x) ? String(x) : x.toFixed(1);
}

/** @returns {string} an <svg> document of the given size around `body` */
function svgDoc(width, height, title, body) {
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ${FONT} font-size="12">\n` +
    `<title>${esc(title)}</title>\n<rect width="${width}" height="${height}" fill="#ffffff"/>\n${body}</svg>\n`;
}

function text(x, y, s, { anchor = 'start', size, weight, fill = '#222', rotate } = {}) {
  const extra = `${size ? ` font-size="${size}"` : ''}${weight ? ` font-weight="${weight}"` : ''}${rotate ? ` transform="rotate(${rotate} ${num(x)} ${num(y)})"` : ''}`;
  return `<text x="${num(x)}" y="${num(y)}" text-anchor="${anchor}" fill="${fill}"${extra}>${esc(s)}</text>\n`;
}

function line(x1, y1, x2, y2, { stroke = '#222', width = 1, dash } = {}) {
  return `<line x1="${num(x1)}" y1="${num(y1)}" x2="${num(x2)}" y2="${num(y2)}" stroke="${stroke}" stroke-width="${width}"${dash ? ` stroke-dasharray="${dash}"` : ''}/>\n`;
}

function rect(x, y, w, h, fill, title) {
  const t = title ? `<title>${esc(title)}</title>` : '';
  return `<rect x="${num(x)}" y="${num(y)}" width="${num(Math.max(0, w))}" height="${num(Math.max(0, h))}" fill="${fill}">${t}</rect>\n`;
}

function polyline(points, stroke, { width = 2, dash } = {}) {
  return `<polyline fill="none" stroke="${stroke}" stroke-width="${width}"${dash ? ` stroke-dasharray="${dash}"` : ''} points="${points.map(([x, y]) => `${num(x)},${num(y)}`).join(' ')}"/>\n`;
}

function circle(x, y, r, fill, title) {
  const t = title ? `<title>${esc(title)}</title>` : '';
  return `<circle cx="${num(x)}" cy="${num(y)}" r="${r}" fill="${fill}">${t}</circle>\n`;
}

/**
 * A linear scale from [0 or lo, hi] onto [a, b] with round ticks.
 * @returns {{map: (v: number) => number, ticks: number[]}}
 */
function linearScale(lo, hi, a, b, count = 5) {
  if (hi <= lo) hi = lo + 1;
  const raw = (hi - lo) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw);
  const top = Math.ceil(hi / step) * step;
  const bottom = Math.floor(lo / step) * step;
  const ticks = [];
  for (let v = bottom; v <= top + step / 1e6; v += step) ticks.push(Number(v.toPrecision(12)));
  return { map: (v) => a + ((v - bottom) / (top - bottom)) * (b - a), ticks };
}

/** A log10 scale over whole decades covering [lo, hi]. */
function logScale(lo, hi, a, b) {
  const d0 = Math.floor(Math.log10(lo));
  const d1 = Math.ceil(Math.log10(hi));
  const span = Math.max(1, d1 - d0);
  const ticks = [];
  for (let d = d0; d <= d0 + span; d++) ticks.push(10 ** d);
  return { map: (v) => a + ((Math.log10(v) - d0) / span) * (b - a), ticks };
}

/** 1234567 → "1.2M", 45000 → "45k", 0.5 → "0.5" */
function short(v) {
  const a = Math.abs(v);
  if (a >= 1e6) return `${Number((v / 1e6).toPrecision(3))}M`;
  if (a >= 1e4) return `${Number((v / 1e3).toPrecision(3))}k`;
  return String(Number(v.toPrecision(3)));
}

/** A legend: one coloured swatch and label per entry, in rows from (x, y). */
function legend(x, y, entries, { width = 600, swatch = 'rect' } = {}) {
  let out = '';
  let cx = x;
  let cy = y;
  for (const e of entries) {
    const w = 22 + e.label.length * 6.6;
    if (cx + w > x + width) {
      cx = x;
      cy += 18;
    }
    out += swatch === 'line' ? line(cx, cy - 4, cx + 16, cy - 4, { stroke: e.color, width: 3, dash: e.dash }) : rect(cx, cy - 10, 12, 12, e.color);
    out += text(cx + 20, cy, e.label);
    cx += w + 12;
  }
  return { svg: out, bottom: cy };
}

module.exports = { svgDoc, text, line, rect, polyline, circle, linearScale, logScale, legend, short, esc, PALETTE };
