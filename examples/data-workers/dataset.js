// dataset.js - the dataset of examples/data-workers/train.js: noisy points on two spirals,
// each sample computed in get(i) (standing in for decoding a file). DataLoader worker threads
// load this module themselves and call make(n).
'use strict';

const kd = require('../..');

class Spirals extends kd.data.Dataset {
  constructor(n) { super(); this.n = n; }
  get length() { return this.n; }
  get(i) {
    const label = i % 2;
    const t = (i / this.n) * 2 * Math.PI + 0.5;
    // a little deterministic noise per sample (a hash of i)
    const h = Math.sin(i * 12.9898) * 43758.5453;
    const noise = (h - Math.floor(h) - 0.5) * 0.2;
    const sign = label === 0 ? 1 : -1;
    const x = new Float32Array([sign * (t * Math.cos(t) / 10 + noise), sign * (t * Math.sin(t) / 10 - noise)]);
    return [x, label];
  }
}

exports.make = (n) => new Spirals(n);
