// vutils.js - torchvision.utils' makeGrid and saveImage (torchvision 0.14) for the ported examples,
// with a small PNG encoder over node:zlib (8-bit RGB, filter 0 on every row), so that writing
// sample images needs no image library.
//
//   saveImage(tensor, 'fake.png', {normalize: true})   // tensor [B, C, H, W] or [C, H, W], C 1 or 3
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

module.exports = { makeGrid, saveImage, encodePng, crc32 };
