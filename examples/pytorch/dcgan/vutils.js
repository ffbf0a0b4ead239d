// vutils.js - torchvision.utils' makeGrid and saveImage (torchvision 0.14) for the ported examples,
// with a small PNG encoder and decoder over node:zlib, so that reading and writing images needs no
// image library. The encoder writes 8-bit RGB (filter 0 on every row); the decoder reads what
// common tools write: 8-bit, not interlaced, grey, grey + alpha, RGB, RGBA or palette, every filter.
//
//   saveImage(tensor, 'fake.png', {normalize: true})   // tensor [B, C, H, W] or [C, H, W], C 1 or 3
//   const {width, height, channels, data} = decodePng(fs.readFileSync('in.png'));   // data: HWC bytes
'use strict';

const fs = require('node:fs');
const zlib = require('node:zlib');
const kd = require('../../..');

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

function crc32(buf) {
  let c = 0xffffffff;
  for (let i = 0; i < buf.length; i++) c = CRC_TABLE[(c ^ buf[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type, data) {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/** PNG bytes of an 8-bit RGB image: `rgb` holds height * width * 3 bytes, row-major. */
function encodePng(rgb, width, height) {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // colour type: RGB
  const raw = Buffer.alloc(height * (1 + width * 3));
  for (let y = 0; y < height; y++) {
    raw[y * (1 + width * 3)] = 0; // filter: none
    Buffer.from(rgb.buffer, rgb.byteOffset + y * width * 3, width * 3).copy(raw, y * (1 + width * 3) + 1);
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr), chunk('IDAT', zlib.deflateSync(raw)), chunk('IEND', Buffer.alloc(0)),
  ]);
}

const CHANNELS = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 }; // by PNG colour type

/** The 8-bit pixels of PNG bytes: {width, height, channels, data} (data row-major HWC; palette images as RGB). */
function decodePng(bytes) {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  if (buf.length < 8 || buf.readUInt32BE(0) !== 0x89504e47 || buf.readUInt32BE(4) !== 0x0d0a1a0a) throw new Error('not a PNG file');
  let pos = 8;
  let ihdr = null;
  let palette = null;
  const idat = [];
  while (pos + 8 <= buf.length) {
    const len = buf.readUInt32BE(pos);
    const type = buf.toString('latin1', pos + 4, pos + 8);
    const data = buf.subarray(pos + 8, pos + 8 + len);
    if (data.length !== len) throw new Error(`PNG: truncated ${type} chunk`);
    if (type === 'IHDR') ihdr = data;
    else if (type === 'PLTE') palette = data;
    else if (type === 'IDAT') idat.push(data);
    else if (type === 'IEND') break;
    pos += 12 + len;
  }
  if (!ihdr) throw new Error('PNG: no IHDR chunk');
  const width = ihdr.readUInt32BE(0);
  const height = ihdr.readUInt32BE(4);
  const [depth, colour, , , interlace] = ihdr.subarray(8, 13);
  const ch = CHANNELS[colour];
  if (depth !== 8 || ch === undefined || interlace !== 0) {
    throw new Error(`PNG: only 8-bit non-interlaced images are read (bit depth ${depth}, colour type ${colour}, interlace ${interlace})`);
  }
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const stride = width * ch;
  if (raw.length < height * (stride + 1)) throw new Error('PNG: image data too short');
  const out = new Uint8Array(height * stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const src = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const row = out.subarray(y * stride, (y + 1) * stride);
    const up = y > 0 ? out.subarray((y - 1) * stride, y * stride) : new Uint8Array(stride);
    for (let i = 0; i < stride; i++) {
      const a = i >= ch ? row[i - ch] : 0;
      const b = up[i];
      const c = i >= ch ? up[i - ch] : 0;
      let p;
      if (filter === 0) p = 0;
      else if (filter === 1) p = a;
      else if (filter === 2) p = b;
      else if (filter === 3) p = (a + b) >> 1;
      else if (filter === 4) {
        const pa = Math.abs(b - c);
        const pb = Math.abs(a - c);
        const pc = Math.abs(a + b - 2 * c);
        p = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      } else throw new Error(`PNG: unknown row filter ${filter}`);
      row[i] = (src[i] + p) & 0xff;
    }
  }
  if (colour !== 3) return { width, height, channels: ch, data: out };
  if (!palette) throw new Error('PNG: palette image without a PLTE chunk');
  const rgb = new Uint8Array(width * height * 3);
  for (let i = 0; i < out.length; i++) rgb.set(palette.subarray(out[i] * 3, out[i] * 3 + 3), i * 3);
  return { width, height, channels: 3, data: rgb };
}

/** torchvision.utils.make_grid: the images of a [B, C, H, W] tensor in a grid of nrow columns. */
function makeGrid(tensor, { nrow = 8, padding = 2, normalize = false, padValue = 0 } = {}) {
  return kd.tidy(() => {
    let t = tensor.detach();
    if (t.dim() === 2) t = t.unsqueeze(0);
    if (t.dim() === 3) t = t.size(0) === 1 ? kd.cat([t, t, t], 0).unsqueeze(0) : t.unsqueeze(0);
    if (t.dim() === 4 && t.size(1) === 1) t = kd.cat([t, t, t], 1);
    if (normalize) {
      const lo = t.min().item();
      const hi = t.max().item();
      t = t.clamp(lo, hi).sub(lo).div(Math.max(hi - lo, 1e-5));
    }
    if (t.size(0) === 1) return t.squeeze(0);
    const nmaps = t.size(0);
    const xmaps = Math.min(nrow, nmaps);
    const ymaps = Math.ceil(nmaps / xmaps);
    const height = t.size(2) + padding;
    const width = t.size(3) + padding;
    const grid = t.newFull([t.size(1), height * ymaps + padding, width * xmaps + padding], padValue);
    let k = 0;
    for (let y = 0; y < ymaps; y++) {
      for (let x = 0; x < xmaps && k < nmaps; x++, k++) {
        grid.narrow(1, y * height + padding, height - padding).narrow(2, x * width + padding, width - padding).copy_(t.select(0, k));
      }
    }
    return grid;
  });
}

/** torchvision.utils.save_image: makeGrid, then x * 255 + 0.5 clamped to bytes, written as PNG. */
function saveImage(tensor, filename, options = {}) {
  const bytes = kd.tidy(() => {
    const grid = makeGrid(tensor, options);
    return grid.mul(255).add(0.5).clamp(0, 255).permute(1, 2, 0).to('uint8').contiguous();
  });
  const [h, w] = bytes.shape;
  fs.writeFileSync(filename, encodePng(bytes.dataSync(), w, h));
  bytes.dispose();
}

module.exports = { makeGrid, saveImage, encodePng, decodePng, crc32 };
