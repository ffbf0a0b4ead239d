// kindling_api.js - prints, as JSON, the names kindling has: the functions of kd and of its
// namespaces (nn.functional, linalg, special, fft) and the Tensor methods and properties.
// tools/opinfo/generate.py asks this at generation time, so re-running it after new ops land
// covers them without editing anything.
'use strict';
const kd = require('../../lib');

const NAMESPACES = ['', 'nn.functional', 'linalg', 'special', 'fft'];

function functionsOf(path) {
  let o = kd;
  for (const seg of path ? path.split('.') : []) o = o && o[seg];
  if (!o) return [];
  return Object.keys(o).filter((k) => typeof o[k] === 'function' && !/^[A-Z]/.test(k)).sort();
}

const methods = new Set();
for (let p = kd.Tensor.prototype; p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
  for (const k of Object.getOwnPropertyNames(p)) if (k !== 'constructor') methods.add(k);
}
const functions = {};
for (const ns of NAMESPACES) functions[ns] = functionsOf(ns);
process.stdout.write(JSON.stringify({ functions, methods: [...methods].sort() }));
