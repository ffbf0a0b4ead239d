// dtypes.js - dtype strings in JS. kd.dtypes lists the names (float32, the default, first);
// parseDtype() reads any dtype string a user passes - to kd.tensor(), the factories' and ops'
// `dtype` options, Tensor#to, Module#to, autocast - through the native parser (kd_dtype_parse in
// src/core/dtype.c, which holds the one table of PyTorch's aliases: float -> float32,
// double -> float64, half -> float16, long -> int64, int -> int32, short -> int16), so JS and C
// accept exactly the same names.
'use strict';

const { typeError } = require('./errors');

const DTYPES = Object.freeze(['float32', 'float64', 'float16', 'bfloat16', 'int8', 'uint8', 'int16', 'int32', 'int64', 'bool']);

let N = null; // the native binding, set by bind()
const parsed = new Map(); // accepted name -> canonical name (only names that parse, so it stays small)

/** The canonical dtype name for a dtype string ('float' -> 'float32'), or null if it is not one. */
function parseDtype(name) {
  if (typeof name !== 'string') return null;
  let canonical = parsed.get(name);
  if (canonical === undefined) {
    canonical = N.parseDtype(name);
    if (canonical === null) return null;
    parsed.set(name, canonical);
  }
  return canonical;
}

/** "unknown dtype 'float128'; expected one of float32, ..." */
function unknownDtypeMessage(name) {
  return `unknown dtype '${name}'; expected one of ${DTYPES.join(', ')}`;
}

/** parseDtype() that throws a KindlingTypeError naming `where` for anything that is not a dtype. */
function checkDtype(name, where) {
  if (typeof name !== 'string') throw typeError(`${where}: dtype must be a string such as 'float32', got ${typeof name}`);
  const canonical = parseDtype(name);
  if (canonical === null) throw typeError(`${where}: ${unknownDtypeMessage(name)}`);
  return canonical;
}

// A string that names a device type kd_device_parse (src/core/device.c) knows: 'cpu', 'cuda',
// 'cuda:<index>' (a malformed index is the device parser's error to report).
const DEVICE_STRING = /^(cpu|cuda)(:|$)/;

/**
 * to()'s string argument: {dtype} for a dtype name, {device} for a device string, else a
 * KindlingTypeError calling it an unknown dtype (PyTorch's aliases included in what is accepted).
 */
function dtypeOrDevice(name, where) {
  const dtype = parseDtype(name);
  if (dtype !== null) return { dtype };
  if (DEVICE_STRING.test(name)) return { device: name };
  throw typeError(`${where}: ${unknownDtypeMessage(name)} (or a device: 'cpu', 'cuda', 'cuda:<index>')`);
}

/** What lib/args.js checks `dtype` arguments with. */
const acceptedDtypes = { has: (name) => parseDtype(name) !== null };

/** Called by lib/index.js with the native binding. */
function bind(binding) { N = binding; }

module.exports = { DTYPES, parseDtype, checkDtype, unknownDtypeMessage, dtypeOrDevice, acceptedDtypes, bind };
