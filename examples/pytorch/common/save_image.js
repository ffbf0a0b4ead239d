// save_image.js - torchvision.utils.save_image for the ports of pytorch/examples: a batch of
// images [B, C, H, W] (values in [0, 1]) laid out as torchvision's make_grid does (nrow images
// per row, `padding` pixels of 0 between and around them) and written as an 8-bit PNG
// (grayscale for 1 channel, RGB for 3), with node:zlib.
//
//   saveImage(tensor, 'results/sample_1.png', { nrow: 8, padding: 2 })
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const zlib = require('node:zlib');

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
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(td));
  return Buffer.concat([len, td, crc]);
}

/** PNG bytes of an 8-bit image: pixels (height * width * channels, row-major), channels 1 or 3. */
function encodePng(pixels, width, height, channels) {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8;
  ihdr[9] = channels === 1 ? 0 : 2;
  const stride = width * channels;
  const raw = Buffer.alloc((stride + 1) * height);
  for (let y = 0; y < height; y++) {
    raw[y * (stride + 1)] = 0; // filter: none
    Buffer.from(pixels.buffer, pixels.byteOffset + y * stride, stride).copy(raw, y * (stride + 1) + 1);
  }
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, chunk('IHDR', ihdr), chunk('IDAT', zlib.deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}

/** Writes images [B, C, H, W] (or [C, H, W]) with values in [0, 1] as one PNG grid. */
function saveImage(tensor, filename, { nrow = 8, padding = 2, padValue = 0 } = {}) {
  const shape = tensor.shape.length === 3 ? [1, ...tensor.shape] : tensor.shape;
  const [b, c, h, w] = shape;
  if (shape.length !== 4 || (c !== 1 && c !== 3)) throw new RangeError(`saveImage: expected [B, 1|3, H, W] images, got [${tensor.shape}]`);
  const values = tensor.detach().cpu().contiguous().to('float32').dataSync();
  const xmaps = Math.min(nrow, b);
  const ymaps = Math.ceil(b / xmaps);
  const width = xmaps * (w + padding) + padding;
  const height = ymaps * (h + padding) + padding;
  const out = new Uint8Array(width * height * c).fill(Math.round(padValue * 255));
  for (let k = 0; k < b; k++) {
    const x0 = (k % xmaps) * (w + padding) + padding;
    const y0 = Math.floor(k / xmaps) * (h + padding) + padding;
    for (let ch = 0; ch < c; ch++) {
      for (let y = 0; y < h; y++) {
        for (let x = 0; x < w; x++) {
          // torchvision: mul(255).add_(0.5).clamp_(0, 255) then to uint8
          const v = Math.min(255, Math.max(0, values[((k * c + ch) * h + y) * w + x] * 255 + 0.5));
          out[((y0 + y) * width + (x0 + x)) * c + ch] = Math.floor(v);
        }
      }
    }
  }
  fs.mkdirSync(path.dirname(path.resolve(filename)), { recursive: true });
  fs.writeFileSync(filename, encodePng(out, width, height, c));
}

module.exports = { saveImage, encodePng };
