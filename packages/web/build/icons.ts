// App icons for the installable inbox, drawn at build time (no binary files in the repository):
// a rounded blue square with a white "card" and an amber dot (someone is waiting). PNG encoding
// with node:zlib; shapes are signed-distance functions with one pixel of anti-aliasing.
import { deflateSync } from 'node:zlib';

const CRC = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

function crc32(b: Buffer): number {
  let c = 0xffffffff;
  for (const x of b) c = CRC[(c ^ x) & 255]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(td));
  return Buffer.concat([len, td, crc]);
}

/** Signed distance to a rounded rectangle centred at (cx, cy) with half sizes (hw, hh), radius r. */
function roundRect(x: number, y: number, cx: number, cy: number, hw: number, hh: number, r: number): number {
  const qx = Math.abs(x - cx) - hw + r;
  const qy = Math.abs(y - cy) - hh + r;
  return Math.hypot(Math.max(qx, 0), Math.max(qy, 0)) + Math.min(Math.max(qx, qy), 0) - r;
}

type Rgb = readonly [number, number, number];
const BLUE: Rgb = [30, 91, 216];
const WHITE: Rgb = [255, 255, 255];
const AMBER: Rgb = [245, 166, 35];
const LINE: Rgb = [180, 198, 240];

/**
 * A `size`-pixel PNG. `maskable`: the background fills the square and the drawing keeps to the
 * inner 80 % safe zone (W3C manifest "maskable" purpose).
 */
export function iconPng(size: number, maskable = false): Buffer {
  const s = size;
  const scale = maskable ? 0.8 : 1;
  const raw = Buffer.alloc((s * 4 + 1) * s);
  const cover = (d: number) => Math.min(1, Math.max(0, 0.5 - d)); // 1 inside, 0 outside, AA at the edge
  for (let y = 0; y < s; y++) {
    raw[y * (s * 4 + 1)] = 0;
    for (let x = 0; x < s; x++) {
      const px = x + 0.5;
      const py = y + 0.5;
      const u = (v: number) => s / 2 + (v - 0.5) * s * scale; // unit -> pixels inside the safe zone
      const a = maskable ? 1 : cover(roundRect(px, py, s / 2, s / 2, s / 2, s / 2, s * 0.22));
      let c: Rgb = BLUE;
      const card = cover(roundRect(px, py, u(0.47), u(0.55), s * scale * 0.27, s * scale * 0.2, s * scale * 0.05));
      const line1 = cover(roundRect(px, py, u(0.44), u(0.5), s * scale * 0.17, s * scale * 0.025, s * scale * 0.02));
      const line2 = cover(roundRect(px, py, u(0.4), u(0.6), s * scale * 0.13, s * scale * 0.025, s * scale * 0.02));
      const dot = cover(Math.hypot(px - u(0.72), py - u(0.33)) - s * scale * 0.11);
      const mix = (from: Rgb, to: Rgb, t: number): Rgb => [from[0] + (to[0] - from[0]) * t, from[1] + (to[1] - from[1]) * t, from[2] + (to[2] - from[2]) * t];
      c = mix(c, WHITE, card);
      c = mix(c, LINE, Math.min(line1 + line2, 1) * card);
      c = mix(c, AMBER, dot);
      const o = y * (s * 4 + 1) + 1 + x * 4;
      raw[o] = Math.round(c[0]);
      raw[o + 1] = Math.round(c[1]);
      raw[o + 2] = Math.round(c[2]);
      raw[o + 3] = Math.round(a * 255);
    }
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(s, 0);
  ihdr.writeUInt32BE(s, 4);
  ihdr[8] = 8;
  ihdr[9] = 6;
  return Buffer.concat([
    Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** The same drawing as SVG (favicon, any size). */
export const ICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100"><rect width="100" height="100" rx="22" fill="#1e5bd8"/><rect x="20" y="35" width="54" height="40" rx="5" fill="#fff"/><rect x="27" y="47.5" width="34" height="5" rx="2" fill="#b4c6f0"/><rect x="27" y="57.5" width="26" height="5" rx="2" fill="#b4c6f0"/><circle cx="72" cy="33" r="11" fill="#f5a623"/></svg>`;
