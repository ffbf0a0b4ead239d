// format.js - prints tensors the way PyTorch 1.13 does (torch/_tensor_str.py, default print
// options: precision 4, threshold 1000, edgeitems 3, linewidth 80):
//   tensor([[1., 2.],
//           [3., 4.]])
//   tensor([1, 2, 3], dtype=int32)          (dtype shown unless float32, int64 or bool)
//   tensor([0.1000, 2.5000], device='cuda:0')
//   tensor([1., 2.], requires_grad=True)    tensor(3., grad_fn=<SumBackward0>)
// Floats use one formatter for the whole tensor: integer-valued -> `1.`, else 4 decimals, and
// scientific notation when the magnitudes span more than 1000x or leave [1e-4, 1e8].
// Tensors over 1000 elements are summarised with `...` (3 items at each edge of every dim), and
// only those items are read: the caller passes the values of summaryView()'s view, never the
// whole tensor (printing kd.ones([1]).expand([1e9]) reads 6 values).
'use strict';

const PRECISION = 4;
const THRESHOLD = 1000;
const EDGEITEMS = 3;
const LINEWIDTH = 80;

const FLOAT_DTYPES = new Set(['float32', 'float64', 'float16', 'bfloat16']);
const DEFAULT_DTYPES = new Set(['float32', 'int64', 'bool']);

// Python rounds exact ties to even; JS toFixed/toExponential round them up. Ties are rare
// (the value must be a short binary fraction), so detect them from a longer exact expansion.
function fixedHalfEven(a, p) {
  const s = a.toFixed(p);
  const long = a.toFixed(Math.min(100, p + 30));
  const dot = long.indexOf('.');
  const rest = long.slice(dot + 1 + p);
  if (rest[0] !== '5' || !/^50*$/.test(rest)) return s;
  const truncated = long.slice(0, dot + 1 + p).replace(/\.$/, '');
  const lastDigit = truncated.charCodeAt(truncated.length - 1) - 48;
  return lastDigit % 2 === 0 ? truncated : s;
}

function expHalfEven(a, p) {
  let s = a.toExponential(p);
  const long = a.toExponential(Math.min(100, p + 30));
  const e = long.indexOf('e');
  const mant = long.slice(0, e);
  const dot = mant.indexOf('.');
  const rest = mant.slice(dot + 1 + p);
  if (rest[0] === '5' && /^50*$/.test(rest)) {
    const truncated = mant.slice(0, dot + 1 + p).replace(/\.$/, '');
    if ((truncated.charCodeAt(truncated.length - 1) - 48) % 2 === 0) s = truncated + long.slice(e);
  }
  // Python writes at least two exponent digits: 1.0000e+08
  return s.replace(/e([+-])(\d)$/, 'e$10$2');
}

function signed(x, body) {
  return (x < 0 || Object.is(x, -0)) ? '-' + body : body;
}

/** Python's '{:.4f}'.format(x). */
function pyFixed(x, p) {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  return signed(x, fixedHalfEven(Math.abs(x), p));
}

/** Python's '{:.4e}'.format(x). */
function pyExp(x, p) {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  return signed(x, expHalfEven(Math.abs(x), p));
}

// One formatter per tensor, built from the (summarised) values it will print.
class Formatter {
  constructor(values, floating) {
    this.floating = floating;
    this.intMode = true;
    this.sciMode = false;
    this.maxWidth = 1;
    if (!floating) {
      for (const v of values) this.maxWidth = Math.max(this.maxWidth, formatPlain(v).length);
      return;
    }
    let min = Infinity, max = 0, count = 0;
    for (const v of values) {
      if (!Number.isFinite(v) || v === 0) continue;
      const a = Math.abs(v);
      if (a < min) min = a;
      if (a > max) max = a;
      if (this.intMode && v !== Math.ceil(v)) this.intMode = false;
      count++;
    }
    if (count === 0) return;
    const finiteNonzero = (fn) => {
      for (const v of values) if (Number.isFinite(v) && v !== 0) fn(v);
    };
    if (this.intMode) {
      if (max / min > 1000 || max > 1e8) {
        this.sciMode = true;
        finiteNonzero((v) => { this.maxWidth = Math.max(this.maxWidth, pyExp(v, PRECISION).length); });
      } else {
        finiteNonzero((v) => { this.maxWidth = Math.max(this.maxWidth, pyFixed(v, 0).length + 1); });
      }
    } else if (max / min > 1000 || max > 1e8 || min < 1e-4) {
      this.sciMode = true;
      finiteNonzero((v) => { this.maxWidth = Math.max(this.maxWidth, pyExp(v, PRECISION).length); });
    } else {
      finiteNonzero((v) => { this.maxWidth = Math.max(this.maxWidth, pyFixed(v, PRECISION).length); });
    }
  }

  format(v) {
    let s;
    if (!this.floating) s = formatPlain(v);
    else if (this.sciMode) s = pyExp(v, PRECISION);
    else if (this.intMode) {
      s = pyFixed(v, 0);
      if (Number.isFinite(v)) s += '.';
    } else s = pyFixed(v, PRECISION);
    return s.length < this.maxWidth ? ' '.repeat(this.maxWidth - s.length) + s : s;
  }
}

function formatPlain(v) {
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  return String(v);
}

const numelOf = (shape) => shape.reduce((a, b) => a * b, 1);
/** Whether a tensor of this shape prints summarised (with `...`). */
const isSummarized = (shape) => numelOf(shape) > THRESHOLD;
// A dim printed as its first and last EDGEITEMS items.
const isCut = (n, summarize) => summarize && n > 2 * EDGEITEMS;

/**
 * The view whose values a summarised print shows (PyTorch's get_summarized_data), as as_strided
 * arguments over the tensor's storage: each dim cut to its edges becomes two dims [2, EDGEITEMS]
 * (the head, then the tail at (n - EDGEITEMS) * stride). Its row-major values are what
 * formatTensor() takes for a tensor that isSummarized().
 */
function summaryView(shape, strides, offset) {
  const size = [];
  const stride = [];
  for (let d = 0; d < shape.length; d++) {
    if (isCut(shape[d], true)) {
      size.push(2, EDGEITEMS);
      stride.push((shape[d] - EDGEITEMS) * strides[d], strides[d]);
    } else {
      size.push(shape[d]);
      stride.push(strides[d]);
    }
  }
  return { size, stride, offset };
}

// Positions (in the printed values) of the items along one dim, -1 marking the ellipsis.
function dimPositions(n, summarize) {
  const out = [];
  if (isCut(n, summarize)) {
    for (let i = 0; i < EDGEITEMS; i++) out.push(i);
    out.push(-1);
    for (let i = 0; i < EDGEITEMS; i++) out.push(EDGEITEMS + i);
  } else {
    for (let i = 0; i < n; i++) out.push(i);
  }
  return out;
}

// get(i): the i-th printed value in row-major order (all values, or the summary view's).
function tensorBody(get, count, shape, floating, indent) {
  const summarize = isSummarized(shape);
  const printed = shape.map((n) => (isCut(n, summarize) ? 2 * EDGEITEMS : n));
  const strides = new Array(shape.length);
  let acc = 1;
  for (let d = shape.length - 1; d >= 0; d--) { strides[d] = acc; acc *= printed[d]; }
  const idx = shape.map((n) => dimPositions(n, summarize));

  // the formatter sees exactly the printed values
  const values = new Array(count);
  for (let i = 0; i < count; i++) values[i] = get(i);
  const fmt = new Formatter(values, floating);
  if (shape.length === 0) return fmt.format(get(0));

  const render = (d, off, ind) => {
    if (d === shape.length - 1) {
      const elementLength = fmt.maxWidth + 2;
      const perLine = Math.max(1, Math.floor((LINEWIDTH - ind) / elementLength));
      const items = idx[d].map((i) => (i < 0 ? ' ...' : fmt.format(get(off + i * strides[d]))));
      const lines = [];
      for (let i = 0; i < items.length; i += perLine) lines.push(items.slice(i, i + perLine).join(', '));
      return '[' + lines.join(',\n' + ' '.repeat(ind + 1)) + ']';
    }
    const slices = idx[d].map((i) => (i < 0 ? '...' : render(d + 1, off + i * strides[d], ind + 1)));
    return '[' + slices.join(',' + '\n'.repeat(shape.length - d - 1) + ' '.repeat(ind + 1)) + ']';
  };
  return render(0, 0, indent);
}

function pyTuple(shape) {
  return shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
}

/**
 * The PyTorch-style string of a tensor.
 * @param {{shape:number[], dtype:string, device:string, data:ArrayLike<number|bigint>,
 *   requiresGrad?:boolean, gradFn?:string|null}} t
 *   data: the values in row-major order (float16/bfloat16 already as float32, bool as 0/1,
 *   int64 as bigint): all of them, or for a shape that isSummarized() those of summaryView().
 *   gradFn: the name of the node that made the tensor ('MulBackward0'), or null.
 */
function formatTensor({ shape, dtype, device, data, requiresGrad = false, gradFn = null }) {
  const prefix = 'tensor(';
  const indent = prefix.length;
  const suffixes = [];
  if (device !== 'cpu') suffixes.push(`device='${device}'`);
  let body;
  if (numelOf(shape) === 0) {
    if (shape.length !== 1) suffixes.push(`size=${pyTuple(shape)}`);
    if (dtype !== 'float32') suffixes.push(`dtype=${dtype}`);
    body = '[]';
  } else {
    if (!DEFAULT_DTYPES.has(dtype)) suffixes.push(`dtype=${dtype}`);
    const get = dtype === 'bool' ? (i) => data[i] !== 0 : (i) => data[i];
    body = tensorBody(get, data.length, shape, FLOAT_DTYPES.has(dtype), indent);
  }
  if (gradFn) suffixes.push(`grad_fn=<${gradFn}>`);
  else if (requiresGrad) suffixes.push('requires_grad=True');
  // PyTorch's _add_suffixes
  let out = prefix + body;
  let lastLineLen = out.length - out.lastIndexOf('\n') + 1;
  for (const s of suffixes) {
    if (lastLineLen + s.length + 2 > LINEWIDTH) {
      out += ',\n' + ' '.repeat(indent) + s;
      lastLineLen = indent + s.length;
    } else {
      out += ', ' + s;
      lastLineLen += s.length + 2;
    }
  }
  return out + ')';
}

module.exports = { formatTensor, isSummarized, summaryView, pyFixed, pyExp };
