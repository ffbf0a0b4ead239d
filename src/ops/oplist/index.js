// oplist/index.js - THE op list: every op kindling dispatches is declared once, in one of the
// files of this folder (one file per op family; ./define.js has the shorthand constructors).
// This file concatenates them. tools/gen-ops.js turns the list into the C op table and kernel
// table (src/ops/ops_gen.{h,c}), the code enums (src/ops/op_codes.gen.h), the JS functions and
// Tensor methods (lib/ops.gen.js) and the TypeScript declarations (types/ops.gen.d.ts).
// Run `npm run gen` after editing; a test checks the generated files are fresh.
// A new family is a new file here: it is picked up without editing this one (see docs/ADDING_OPS.md).
//
// Fields:
//   name      op name (camelCase JS name; PyTorch's overload suffix after '.', e.g. 'max.dim')
//   args      PyTorch-style schema; '*' starts keyword-only args (options object in JS).
//             Types: Tensor Tensor? Tensor|Scalar Scalar Scalar? int int? int|int[] int[] int[]?
//                    float bool dtype? device? str? Tensor[]
//   returns   'Tensor', 'Tensor[]', '(Tensor values, Tensor indices)', or 'bool' (a JS boolean: the
//             kernel returns a 0-d bool tensor that JS reads and frees; allclose, equal)
//   varargs   true: the only positional Tensor[] may also be spread (kd.meshgrid(x, y))
//   variants  'function' (kd.op), 'method' (t.op), 'inplace' (also generates 'op_', method only)
//   kind      pointwise | reduction | view | factory | linalg | copy | composite (for docs/OPS.md)
//   code      selects the operation inside a shared kernel: KD_<GROUP>_<NAME>; the generator
//             makes one enum per GROUP (enum kd_<group>_code) from the codes the list uses
//   ns        namespaces of the function form: [''] (kd.op, the default), ['nn.functional'],
//             or both (['', 'nn.functional'] installs kd.relu and kd.nn.functional.relu)
//   cpu/cuda  kernel function per backend key
//   generic   one device-agnostic kernel for every backend key (views, composite-explicit)
//   composite a decomposition into other ops: registered on every key, Autograd included
//   flags     extra KD_OP_FLAG_* (nondiff, cross_device)
//   varargs   true: the last positional Tensor[] may also be given as separate tensors, as
//             PyTorch's Python functions that take *tensors (einsum('ij,jk', a, b), meshgrid(a, b))
//   numberSelf  true: the function form also takes a number (or boolean) as self, as PyTorch's
//             does for add, sub, mul, div, pow, remainder, xlogy, ... (kd.pow(2, t)); it becomes
//             a 0-d tensor of PyTorch's result type (Note [Numbers as self] in lib/args.js)
//   doc       one line for JSDoc
'use strict';
const fs = require('node:fs');
const path = require('node:path');

// The foundation's families first (op ids and docs/OPS.md follow this order), then every other
// file of the folder in name order.
const FIRST = ['creation', 'copy', 'views', 'pointwise', 'reductions', 'linalg'];
const files = fs.readdirSync(__dirname).filter((f) => f.endsWith('.js') && f !== 'index.js' && f !== 'define.js')
  .map((f) => f.slice(0, -3));
const order = [...FIRST.filter((f) => files.includes(f)), ...files.filter((f) => !FIRST.includes(f)).sort()];

module.exports = order.flatMap((f) => require(path.join(__dirname, f)).map((e) => ({ ...e, family: f })));
