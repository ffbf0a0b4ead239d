// library.test.js - kd.library: ops defined at run time with JS implementations (forward values
// against float64 references computed here), their autograd formulas (gradcheck, gradgradcheck,
// the node's name), autocast policies, noGrad / inferenceMode, the schema syntax, error codes,
// errors thrown by implementations, and that calls leave no tensor behind (kd.memory()).
'use strict';

const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { kd, assert, collectGarbage } = require('./helpers');

const L = kd.library;
const f64 = (data) => kd.tensor(data, { dtype: 'float64' });
const close = (t, expected, tol = 1e-12) => {
  const got = Array.from(t.dataSync());
  assert.equal(got.length, expected.length);
  got.forEach((g, i) => assert.ok(Math.abs(g - expected[i]) <= tol * (1 + Math.abs(expected[i])), `element ${i}: ${g} vs ${expected[i]}`));
};
const code = (c) => (e) => { assert.equal(e.code, c, e.message); return true; };

// every test defines its ops under its own name
let n = 0;
const fresh = (base) => `t${++n}_${base}`;

describe('kd.library', function () {
  it('defines an op with defaults; kd.ops calls it with positional or named arguments', function () {
    const ns = fresh('lib');
    const scale = L.define(`${ns}::scale(Tensor x, float alpha=1.0) -> Tensor`);
    L.impl(`${ns}::scale`, 'cpu', (x, alpha) => x.mul(alpha));
    assert.equal(kd.ops[ns].scale, scale);
    const x = f64([1.5, -2, 3.25]);
    close(kd.ops[ns].scale(x, 2), [3, -4, 6.5]);
    close(kd.ops[ns].scale(x), [1.5, -2, 3.25]);
    close(kd.ops[ns].scale(x, { alpha: -0.5 }), [-0.75, 1, -1.625]);
    close(kd.ops[ns].scale({ x, alpha: 4 }), [6, -8, 13]);
    assert.throws(() => kd.ops[ns].scale(x, { beta: 1 }), code('KD_INVALID_TYPE'));
    assert.throws(() => kd.ops[ns].scale(x, 1, 2), code('KD_INVALID_TYPE'));
    assert.throws(() => kd.ops[ns].scale(x, 'two'), code('KD_INVALID_TYPE'));
    assert.throws(() => kd.ops[ns].scale(), (e) => e.code === 'KD_INVALID_TYPE' && /missing required argument 'x'/.test(e.message));
  });

  it('parses every argument kind and hands the values to the implementation', function () {
    const ns = fresh('lib');
    let seen = null;
    L.define(`${ns}::kinds(Tensor x, Tensor? w=None, Tensor[] xs=[], int k=3, int[] dims=[0, 1], bool flag=False, ` +
      `Scalar s=2.5, str mode='mean', float? f=None, ScalarType? dtype=None, *, int[2] pair=1) -> Tensor`);
    L.impl(`${ns}::kinds`, 'cpu', (x, w, xs, k, dims, flag, s, mode, f, dtype, pair) => {
      seen = { w, nxs: xs.length, k, dims, flag, s, mode, f, dtype, pair };
      return x.add(1);
    });
    const x = f64([1, 2]);
    close(kd.ops[ns].kinds(x), [2, 3]);
    assert.deepEqual(seen, { w: null, nxs: 0, k: 3, dims: [0, 1], flag: false, s: 2.5, mode: 'mean', f: null, dtype: null, pair: [1] });
    kd.ops[ns].kinds(x, x, [x, x], 7, [2], true, 4, 'sum', 0.5, 'float32', { pair: [3, 4] });
    assert.deepEqual(seen.dims, [2]);
    assert.equal(seen.nxs, 2);
    assert.ok(seen.w instanceof kd.Tensor);
    assert.deepEqual([seen.k, seen.flag, seen.s, seen.mode, seen.f, seen.dtype, seen.pair], [7, true, 4, 'sum', 0.5, 'float32', [3, 4]]);
  });

  it('multiple returns, Tensor[] arguments and Tensor[] returns', function () {
    const ns = fresh('lib');
    L.define(`${ns}::sincos(Tensor x) -> (Tensor sin, Tensor cos)`);
    L.impl(`${ns}::sincos`, 'cpu', (x) => [x.sin(), x.cos()]);
    L.define(`${ns}::total(Tensor[] xs) -> Tensor`);
    L.impl(`${ns}::total`, 'cpu', (xs) => xs.reduce((a, b) => a.add(b)));
    L.define(`${ns}::halves(Tensor x) -> Tensor[]`);
    L.impl(`${ns}::halves`, 'cpu', (x) => x.chunk(2));
    const v = [0.25, -1, 2, 3];
    const x = f64(v);
    const [s, c] = kd.ops[ns].sincos(x);
    close(s, v.map(Math.sin));
    close(c, v.map(Math.cos));
    close(kd.ops[ns].total([x, x, x]), v.map((a) => 3 * a));
    const h = kd.ops[ns].halves(x);
    assert.equal(h.length, 2);
    close(h[0], [0.25, -1]);
    close(h[1], [2, 3]);
  });

  it('an output that is an input comes back as a new tensor with the same values', function () {
    const ns = fresh('lib');
    L.define(`${ns}::same(Tensor x) -> Tensor`);
    L.impl(`${ns}::same`, 'cpu', (x) => x);
    const x = f64([1, 2]);
    const y = kd.ops[ns].same(x);
    assert.notEqual(y, x);
    close(y, [1, 2]);
    y.dispose();
    close(x, [1, 2]);
  });

  it('an element of a Tensor[] input returned as the output: the caller\'s leaf stays a leaf', function () {
    const ns = fresh('lib');
    L.define(`${ns}::first(Tensor[] xs) -> Tensor`);
    L.impl(`${ns}::first`, 'cpu', (xs) => xs[0]);
    L.registerAutograd(`${ns}::first`, (ctx, g) => [[g, null]]);
    L.define(`${ns}::pair(Tensor[] xs) -> (Tensor, Tensor)`);
    L.impl(`${ns}::pair`, 'cpu', (xs) => [xs[1], xs[0].mul(2)]);
    const x = f64([1, 2]).requiresGrad_();
    const w = f64([3, 4]).requiresGrad_();
    const y = kd.ops[ns].first([x, w]);
    assert.notEqual(y, x);
    assert.ok(x.isLeaf);
    assert.equal(x.gradFn, null);
    assert.equal(y.gradFn.name, `${ns}::firstBackward`);
    y.sum().backward();
    close(x.grad, [1, 1]);
    assert.equal(w.grad, null);
    const [a] = kd.noGrad(() => kd.ops[ns].pair([x, w]));
    assert.notEqual(a, w);
    assert.ok(w.isLeaf);
    close(a, [3, 4]);
  });

  it('int[] arguments of any length; a length past what C can hold, or a getter that throws, is an error, not a crash', function () {
    const ns = fresh('lib');
    L.define(`${ns}::f(Tensor x, int[] v) -> Tensor`);
    let seen = null;
    L.impl(`${ns}::f`, 'cpu', (x, v) => { seen = v; return x.clone(); });
    const long = Array.from({ length: 600 }, (_, i) => i - 300);
    kd.ops[ns].f(kd.ones([1]), long).dispose();
    assert.deepEqual(seen, long);
    // hostile array-likes: lengths whose int cast is negative (the 64-slot inline buffer would
    // take them), run in a child so that a crash fails the test rather than the run
    const script = `const kd = require(${JSON.stringify(path.join(__dirname, '..'))});
      kd.library.define('ov::f(Tensor x, int[] v, Tensor[] xs=[], float[]? d=None) -> Tensor');
      kd.library.impl('ov::f', 'cpu', (x) => x.clone());
      const codes = [];
      for (const len of [2 ** 31, 2 ** 32 - 1, 2 ** 24 + 1]) {
        for (const arg of ['v', 'xs', 'd']) {
          const a = new Array(600).fill(0x4141414141);
          a.length = len;
          a.map = () => a;
          try { kd.ops.ov.f(kd.ones([1]), { v: [1], [arg]: a }); codes.push('none'); } catch (e) { codes.push(e.code); }
        }
      }
      // a getter that throws while the list is read: that error reaches the caller
      for (const arg of ['v', 'xs', 'd']) {
        const a = [];
        Object.defineProperty(a, 0, { get() { throw new Error('getter'); } });
        try { kd.ops.ov.f(kd.ones([1]), { v: [1], [arg]: a }); codes.push('none'); } catch (e) { codes.push(e.message); }
      }
      process.stdout.write(JSON.stringify(codes));`;
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    assert.equal(r.status, 0, `exit ${r.status} ${r.signal || ''} ${r.stderr}`);
    assert.deepEqual(JSON.parse(r.stdout), [...Array(9).fill('KD_INVALID_ARGUMENT'), 'getter', 'getter', 'getter']);
  });

  describe('autograd', function () {
    // y = x * w + alpha * x^2: dy/dx = w + 2 alpha x, dy/dw = x
    function defineMulAdd() {
      const ns = fresh('ag');
      const name = `${ns}::mulAdd`;
      L.define(`${name}(Tensor x, Tensor w, float alpha=1.0) -> Tensor`);
      L.impl(name, 'cpu', (x, w, alpha) => x.mul(w).add(x.mul(x).mul(alpha)));
      L.registerAutograd(name, (ctx, g) => {
        const [x, w] = ctx.savedTensors;
        return [g.mul(w.add(x.mul(2 * ctx.alpha))), g.mul(x), null];
      }, {
        setupContext: (ctx, [x, w, alpha]) => { ctx.saveForBackward(x, w); ctx.alpha = alpha; },
      });
      return { ns, name, op: kd.ops[ns].mulAdd };
    }

    it('records a node named after the op; gradients match the formula', function () {
      const { name, op } = defineMulAdd();
      const x = f64([1, -2, 0.5]).requiresGrad_();
      const w = f64([3, 4, -1]).requiresGrad_();
      const y = op(x, w, 0.5);
      assert.equal(y.gradFn.name, `${name}Backward`);
      close(y, [1 * 3 + 0.5, -2 * 4 + 2, 0.5 * -1 + 0.125]);
      y.sum().backward();
      close(x.grad, [3 + 1, 4 - 2, -1 + 0.5]);
      close(w.grad, [1, -2, 0.5]);
    });

    it('gradcheck and gradgradcheck (the backward is made of kd ops)', function () {
      const { op } = defineMulAdd();
      const x = kd.randn([4], { dtype: 'float64' }).requiresGrad_();
      const w = kd.randn([4], { dtype: 'float64' }).requiresGrad_();
      assert.ok(kd.autograd.gradcheck((a, b) => op(a, b, 0.75), [x, w]));
      assert.ok(kd.autograd.gradgradcheck((a, b) => op(a, b, 0.75), [x, w]));
    });

    it('a wrong formula fails gradcheck', function () {
      const ns = fresh('ag');
      L.define(`${ns}::cube(Tensor x) -> Tensor`);
      L.impl(`${ns}::cube`, 'cpu', (x) => x.pow(3));
      L.registerAutograd(`${ns}::cube`, (ctx, g) => g.mul(ctx.savedTensors[0].pow(2)), {
        setupContext: (ctx, [x]) => ctx.saveForBackward(x),
      });
      const x = kd.randn([3], { dtype: 'float64' }).requiresGrad_();
      assert.equal(kd.autograd.gradcheck((a) => kd.ops[ns].cube(a), [x], { raiseException: false }), false);
    });

    it('the ops an implementation calls are not recorded; noGrad and inferenceMode record nothing', function () {
      const { op } = defineMulAdd();
      const x = f64([1, 2]).requiresGrad_();
      const w = f64([3, 4]);
      const y = op(x, w);
      assert.ok(y.requiresGrad);
      assert.ok(!y.gradFn.name.startsWith('Add'));
      const a = kd.noGrad(() => op(x, w));
      assert.equal(a.requiresGrad, false);
      assert.equal(a.gradFn, null);
      const b = kd.inferenceMode(() => op(x, w));
      assert.equal(b.requiresGrad, false);
      close(b, [1 * 3 + 1, 2 * 4 + 4]);
    });

    it('an op without a formula says so at backward; an input that needs no grad gets none', function () {
      const ns = fresh('ag');
      L.define(`${ns}::plain(Tensor x) -> Tensor`);
      L.impl(`${ns}::plain`, 'cpu', (x) => x.mul(2));
      const x = f64([1, 2]).requiresGrad_();
      const y = kd.ops[ns].plain(x);
      assert.ok(y.requiresGrad);
      assert.throws(() => y.sum().backward(), /an autograd formula was not registered/);
      const { op } = defineMulAdd();
      const w = f64([5, 6]).requiresGrad_();
      op(f64([1, 2]), w).sum().backward();
      close(w.grad, [1, 2]);
    });

    it('tensors kept on ctx (saved or as properties) outlive the tidy scope of the call', function () {
      const ns = fresh('ag');
      L.define(`${ns}::sq(Tensor x) -> Tensor`);
      L.impl(`${ns}::sq`, 'cpu', (x) => x.mul(x));
      L.registerAutograd(`${ns}::sq`, (ctx, g) => g.mul(ctx.x).mul(2), { setupContext: (ctx, [x]) => { ctx.x = x; } });
      const x = f64([1, -2, 3]).requiresGrad_();
      const s = kd.tidy(() => kd.ops[ns].sq(x).sum());
      s.backward();
      close(x.grad, [2, -4, 6]);
    });

    it('a saved output: first and second derivatives are right (it is connected to the node again)', function () {
      const ns = fresh('ag');
      L.define(`${ns}::texp(Tensor x) -> Tensor`);
      L.impl(`${ns}::texp`, 'cpu', (x) => x.exp());
      L.registerAutograd(`${ns}::texp`, (ctx, g) => g.mul(ctx.savedTensors[0]), { setupContext: (ctx, inputs, y) => ctx.saveForBackward(y) });
      const x = f64([0.5, -1]).requiresGrad_();
      assert.ok(kd.autograd.gradcheck((t) => kd.ops[ns].texp(t), [x]));
      assert.ok(kd.autograd.gradgradcheck((t) => kd.ops[ns].texp(t), [x]));
    });

    it('saving an output or keeping it on ctx makes no reference cycle (freed after GC)', function () {
      const script = `const kd = require(${JSON.stringify(path.join(__dirname, '..'))});
        const x = kd.randn([100]).requiresGrad_();
        kd.library.define('cyc::a(Tensor x) -> Tensor');
        kd.library.impl('cyc::a', 'cpu', (x) => x.exp());
        kd.library.registerAutograd('cyc::a', (ctx, g) => g.mul(ctx.savedTensors[0]), { setupContext: (ctx, i, y) => ctx.saveForBackward(y) });
        kd.library.define('cyc::b(Tensor x) -> Tensor');
        kd.library.impl('cyc::b', 'cpu', (x) => x.exp());
        kd.library.registerAutograd('cyc::b', (ctx, g) => g.mul(ctx.y), { setupContext: (ctx, i, y) => { ctx.y = y; } });
        (async () => {
          const before = kd.memory().liveTensors;
          for (let i = 0; i < 10; i++) { kd.ops.cyc.a(x).dispose(); kd.ops.cyc.b(x).dispose(); }
          for (let i = 0; i < 10; i++) { global.gc(); await new Promise((r) => setImmediate(r)); }
          process.stdout.write(String(kd.memory().liveTensors - before));
        })();`;
      const r = spawnSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stdout, '0');
    });

    it('a backward must return gradients: a Tensor or null per input, an array of them for a Tensor[]', function () {
      const ns = fresh('ag');
      L.define(`${ns}::k(Tensor x, Tensor[] xs) -> Tensor`);
      L.impl(`${ns}::k`, 'cpu', (x, xs) => x.mul(xs[0]));
      let give = null;
      L.registerAutograd(`${ns}::k`, (ctx, g) => give(g));
      const x = f64([1, 2]).requiresGrad_(), w = f64([3, 4]).requiresGrad_();
      for (const bad of [() => 7, () => 'g', (g) => [g, g], (g) => [g, [3]], (g) => ({ 0: g })]) {
        give = bad;
        assert.throws(() => kd.ops[ns].k(x, [w]).sum().backward(), /returned (a|an) (number|string|object|invalid gradient)/);
      }
      give = (g) => [g, [g]];
      kd.ops[ns].k(x, [w]).sum().backward();
      close(w.grad, [1, 1]);
    });

    it('registering a formula twice is KD_ALREADY_DEFINED', function () {
      const { name } = defineMulAdd();
      assert.throws(() => L.registerAutograd(name, (ctx, g) => g), code('KD_ALREADY_DEFINED'));
    });
  });

  describe('autocast', function () {
    const cpu = (fn) => kd.autocast({ deviceType: 'cpu' }, fn);
    function defineSeen(policy) {
      const ns = fresh('ac');
      const dtypes = [];
      L.define(`${ns}::mix(Tensor a, Tensor b) -> Tensor`);
      L.impl(`${ns}::mix`, 'cpu', (a, b) => { dtypes.push([a.dtype, b.dtype]); return a.add(b); });
      if (policy) L.registerAutocast(`${ns}::mix`, policy);
      return { op: kd.ops[ns].mix, dtypes };
    }

    it('lower casts floating inputs to the scope dtype', function () {
      const { op, dtypes } = defineSeen('lower');
      const y = cpu(() => op(kd.ones([2]), kd.ones([2])));
      assert.deepEqual(dtypes, [['bfloat16', 'bfloat16']]);
      assert.equal(y.dtype, 'bfloat16');
      assert.equal(op(kd.ones([2]), kd.ones([2])).dtype, 'float32'); // outside the scope: no cast
    });

    it('fp32 casts lower-precision inputs up; promote to the widest', function () {
      const fp32 = defineSeen({ cpu: 'fp32' });
      const bf = kd.ones([2], { dtype: 'bfloat16' });
      assert.equal(cpu(() => fp32.op(bf, bf)).dtype, 'float32');
      assert.deepEqual(fp32.dtypes, [['float32', 'float32']]);
      const promote = defineSeen('promote');
      cpu(() => promote.op(bf, kd.ones([2])));
      assert.deepEqual(promote.dtypes, [['float32', 'float32']]);
      const none = defineSeen(null);
      cpu(() => none.op(bf, kd.ones([2])));
      assert.deepEqual(none.dtypes, [['bfloat16', 'float32']]);
    });

    it('gradients flow back to float32 leaves through the casts', function () {
      const ns = fresh('ac');
      L.define(`${ns}::dbl(Tensor x) -> Tensor`);
      L.impl(`${ns}::dbl`, 'cpu', (x) => x.mul(2));
      L.registerAutograd(`${ns}::dbl`, (ctx, g) => g.mul(2));
      L.registerAutocast(`${ns}::dbl`, 'lower');
      const x = kd.ones([3]).requiresGrad_();
      const y = cpu(() => kd.ops[ns].dbl(x));
      assert.equal(y.dtype, 'bfloat16');
      y.to('float32').sum().backward();
      assert.equal(x.grad.dtype, 'float32');
      close(x.grad, [2, 2, 2]);
    });

    it('an unknown policy is a TypeError', function () {
      const { } = defineSeen(null);
      const ns = fresh('ac');
      L.define(`${ns}::p(Tensor a) -> Tensor`);
      assert.throws(() => L.registerAutocast(`${ns}::p`, 'fastest'), code('KD_INVALID_TYPE'));
    });
  });

  describe('errors', function () {
    it('bad schemas are KD_INVALID_SCHEMA with the position', function () {
      const bad = ['noNamespace(Tensor x) -> Tensor', 'a::b(Tensor x -> Tensor', 'a::b(Tensor x)', 'a::b(Widget x) -> Tensor',
        'a::b(Tensor(a!) x) -> Tensor', 'a::b(int x=1.5) -> Tensor', 'a::b(Tensor x, Tensor x) -> Tensor',
        'a::b(Tensor x) -> int', 'a::b(float x=None) -> Tensor', 'a::b(Tensor x) -> Tensor junk',
        'a::b(Tensor a, Tensor b, Tensor c, Tensor d, Tensor e, Tensor f, Tensor g, Tensor h, Tensor i, Tensor j, Tensor k, Tensor l, Tensor m) -> Tensor'];
      for (const s of bad) {
        assert.throws(() => L.define(s), (e) => e.code === 'KD_INVALID_SCHEMA' && /Invalid op schema .* at position \d+/.test(e.message), s);
      }
      assert.throws(() => L.define(42), code('KD_INVALID_TYPE'));
    });

    it('schemas and names are taken whole or refused, never cut short', function () {
      const ns = fresh('err');
      // a schema of any length (a long default string), kept whole
      const mode = 'm'.repeat(3000);
      let seen = null;
      L.define(`${ns}::long(Tensor x, str mode='${mode}') -> Tensor`);
      L.impl(`${ns}::long`, 'cpu', (x, m) => { seen = m; return x.clone(); });
      kd.ops[ns].long(kd.ones([1]));
      assert.equal(seen, mode);
      assert.throws(() => L.define(`${ns}::nul(Tensor x) -> Tensor\0 junk`), (e) => e.code === 'KD_INVALID_ARGUMENT' && /NUL/.test(e.message));
      // names up to 63 characters
      const n63 = `n${'a'.repeat(62)}`;
      L.define(`${ns}::${n63}(Tensor x) -> Tensor`);
      assert.equal(typeof kd.ops[ns][n63], 'function');
      for (const bad of [`${ns}::${n63}b(Tensor x) -> Tensor`, `${ns}::f(Tensor ${n63}b) -> Tensor`, `${ns}${'q'.repeat(63)}::f(Tensor x) -> Tensor`]) {
        assert.throws(() => L.define(bad), (e) => e.code === 'KD_INVALID_SCHEMA' && /longer than 63 characters/.test(e.message), bad);
      }
      // int defaults: exact, or out of range
      assert.throws(() => L.define(`${ns}::big(Tensor x, int k=99999999999999999999) -> Tensor`),
        (e) => e.code === 'KD_INVALID_SCHEMA' && /int64 range/.test(e.message));
      assert.throws(() => L.define(`${ns}::big(Tensor x, int[] k=[1, -99999999999999999999]) -> Tensor`), code('KD_INVALID_SCHEMA'));
      L.define(`${ns}::ints(Tensor x, int k=9007199254740993, int[] ks=[-9223372036854775808, 3]) -> Tensor`);
      L.impl(`${ns}::ints`, 'cpu', (x, k, ks) => { seen = [k, ks]; return x.clone(); });
      kd.ops[ns].ints(kd.ones([1]));
      assert.deepEqual(seen, [9007199254740993n, [-9223372036854775808n, 3]]);
      kd.ops[ns].ints(kd.ones([1]), 2n ** 62n);
      assert.equal(seen[0], 2n ** 62n);
    });

    it('op names cannot reach Object.prototype: kd.library lookups and kd.ops namespaces', function () {
      for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
        assert.throws(() => L.impl(name, 'cpu', (x) => x), (e) => e.code === 'KD_INVALID_ARGUMENT' && /is not defined/.test(e.message), name);
        assert.throws(() => L.registerAutograd(name, (ctx, g) => g), code('KD_INVALID_ARGUMENT'));
        assert.throws(() => L.registerAutocast(name, 'fp32'), code('KD_INVALID_ARGUMENT'));
      }
      const ns = fresh('pp');
      L.define(`${ns}::plain(Tensor x) -> Tensor`);
      L.define(`${ns}::__proto__(Tensor x) -> Tensor`);
      L.impl(`${ns}::__proto__`, 'cpu', (x) => x.neg());
      L.define(`${ns}::constructor(Tensor x) -> Tensor`);
      L.impl(`${ns}::constructor`, 'cpu', (x) => x.mul(3));
      assert.equal(Object.getPrototypeOf(kd.ops[ns]), null);
      assert.deepEqual(Object.keys(kd.ops[ns]).sort(), ['__proto__', 'constructor', 'plain']);
      close(kd.ops[ns].__proto__(f64([1, -2])), [-1, 2]); // eslint-disable-line no-proto
      close(kd.ops[ns].constructor(f64([1])), [3]);
      for (const name of ['toString', 'constructor', '__proto__']) {
        assert.throws(() => L.registerAutocast(`${ns}::plain`, name), (e) => e.code === 'KD_INVALID_TYPE' && /unknown policy/.test(e.message), name);
        assert.throws(() => L.impl(`${ns}::plain`, name, (x) => x), (e) => e.code === 'KD_INVALID_TYPE' && /device must be 'cpu' or 'cuda'/.test(e.message), name);
      }
      L.define('__proto__::f(Tensor x) -> Tensor');
      assert.equal(typeof kd.ops.__proto__.f, 'function'); // eslint-disable-line no-proto
      assert.equal(Object.getPrototypeOf(kd.ops), null);
    });

    it('redefinition and a second implementation for a device are KD_ALREADY_DEFINED', function () {
      const ns = fresh('err');
      L.define(`${ns}::op(Tensor x) -> Tensor`);
      assert.throws(() => L.define(`${ns}::op(Tensor x, int k) -> Tensor`), (e) => e.code === 'KD_ALREADY_DEFINED' && /already defined/.test(e.message));
      L.impl(`${ns}::op`, 'cpu', (x) => x.neg());
      assert.throws(() => L.impl(`${ns}::op`, 'cpu', (x) => x), (e) => e.code === 'KD_ALREADY_DEFINED' && /CPU/.test(e.message));
      assert.throws(() => L.impl(`${ns}::nothere`, 'cpu', (x) => x), code('KD_INVALID_ARGUMENT'));
      assert.throws(() => L.impl(`${ns}::op`, 'tpu', (x) => x), code('KD_INVALID_TYPE'));
    });

    it('a call with no kernel for the device names the op and the backend', function () {
      const ns = fresh('err');
      L.define(`${ns}::gpuOnly(Tensor x) -> Tensor`);
      L.impl(`${ns}::gpuOnly`, 'cuda', (x) => x.neg());
      assert.throws(() => kd.ops[ns].gpuOnly(kd.ones([2])),
        (e) => e.code === 'KD_NOT_SUPPORTED' && e.message === `Could not run '${ns}::gpuOnly' with arguments from the 'CPU' backend: no kernel is registered`);
    });

    it('an implementation returning the wrong things is a clear error', function () {
      const ns = fresh('err');
      L.define(`${ns}::two(Tensor x) -> (Tensor, Tensor)`);
      L.impl(`${ns}::two`, 'cpu', (x) => [x.neg()]);
      assert.throws(() => kd.ops[ns].two(kd.ones([2])), (e) => e.code === 'KD_INVALID_ARGUMENT' && /returned 1 tensors, its schema says 2/.test(e.message));
      L.define(`${ns}::num(Tensor x) -> Tensor`);
      L.impl(`${ns}::num`, 'cpu', () => 3);
      assert.throws(() => kd.ops[ns].num(kd.ones([2])), (e) => /must return a Tensor/.test(e.message));
      // a returned list is read by index: its own map is not called, a length past 2^24 is refused
      L.define(`${ns}::list(Tensor x, int n) -> Tensor[]`);
      L.impl(`${ns}::list`, 'cpu', (x, n) => {
        const a = [x.mul(2), x.mul(3)];
        a.map = () => { throw new Error('map called'); };
        if (n) a.length = n;
        return a;
      });
      assert.deepEqual(kd.ops[ns].list(kd.ones([1]), 0).map((t) => t.item()), [2, 3]);
      assert.throws(() => kd.ops[ns].list(kd.ones([1]), 2 ** 32 - 1), (e) => e.code === 'KD_INVALID_ARGUMENT' && /more than 16777216 tensors/.test(e.message));
    });

    it('an exception thrown by an implementation surfaces as that same error', function () {
      const ns = fresh('err');
      class MyError extends Error {}
      const thrown = new MyError('bad input for my op');
      L.define(`${ns}::boom(Tensor x) -> Tensor`);
      L.impl(`${ns}::boom`, 'cpu', (x) => { x.mul(2); throw thrown; });
      let caught = null;
      try { kd.ops[ns].boom(kd.ones([2])); } catch (e) { caught = e; }
      assert.equal(caught, thrown);
      // the same through autocast and autograd kernels
      L.registerAutocast(`${ns}::boom`, 'lower');
      L.registerAutograd(`${ns}::boom`, (ctx, g) => g);
      caught = null;
      try { kd.autocast({ deviceType: 'cpu' }, () => kd.ops[ns].boom(kd.ones([2]).requiresGrad_())); } catch (e) { caught = e; }
      assert.equal(caught, thrown);
    });
  });

  describe('memory', function () {
    it('calls, backward, errors and tidy leave nothing allocated', function () {
      const ns = fresh('mem');
      L.define(`${ns}::f(Tensor x, Tensor w) -> Tensor`);
      L.impl(`${ns}::f`, 'cpu', (x, w) => x.mul(w).exp().add(1));
      L.registerAutograd(`${ns}::f`, (ctx, g) => {
        const [x, w] = ctx.savedTensors;
        const e = x.mul(w).exp();
        return [g.mul(e).mul(w), g.mul(e).mul(x)];
      }, { setupContext: (ctx, [x, w]) => ctx.saveForBackward(x, w) });
      L.define(`${ns}::bad(Tensor x) -> Tensor`);
      L.impl(`${ns}::bad`, 'cpu', (x) => { x.add(1); throw new Error('nope'); });
      const x = kd.randn([64, 64]).requiresGrad_();
      const w = kd.randn([64, 64]);
      kd.tidy(() => kd.ops[ns].f(x, w).sum().backward()); // x.grad exists from here on
      const before = collectGarbage();
      for (let i = 0; i < 5; i++) {
        kd.ops[ns].f(x, w).dispose();
        kd.tidy(() => kd.ops[ns].f(x, w).sum().backward());
        kd.tidy(() => { kd.noGrad(() => kd.ops[ns].f(x, w)); });
        assert.throws(() => kd.ops[ns].bad(x), /nope/);
      }
      const after = kd.memory();
      assert.equal(after.liveTensors, before.liveTensors);
      assert.equal(after.hostBytesInUse, before.hostBytesInUse);
      x.dispose();
      w.dispose();
    });

    it('tensors setupContext keeps go with the graph: after backward, at dispose, in tidy (no GC needed)', function () {
      const ns = fresh('mem');
      L.define(`${ns}::k(Tensor x, Tensor[] xs) -> Tensor`);
      L.impl(`${ns}::k`, 'cpu', (x, xs) => x.mul(xs[0]));
      L.registerAutograd(`${ns}::k`, (ctx, g) => [g.mul(ctx.savedTensors[1]), [g.mul(ctx.pair[0])]], {
        setupContext: (ctx, [x, xs], y) => { ctx.saveForBackward(x, xs[0], y); ctx.pair = [x, y]; },
      });
      const before = collectGarbage().liveTensors;
      for (let i = 0; i < 50; i++) {
        kd.tidy(() => kd.ops[ns].k(kd.randn([100]).requiresGrad_(), [kd.randn([100])]).sum().backward());
        const x = kd.randn([100]).requiresGrad_(), w = kd.randn([100]);
        kd.ops[ns].k(x, [w]).dispose();
        x.dispose();
        w.dispose();
      }
      // counted without a turn of the event loop: nothing may wait for a finalizer
      assert.equal(kd.memory().liveTensors, before);
    });

    it('saved tensors: freed after backward unless retainGraph, checked against in-place changes', function () {
      const ns = fresh('mem');
      L.define(`${ns}::sq(Tensor x) -> Tensor`);
      L.impl(`${ns}::sq`, 'cpu', (x) => x.mul(x));
      L.registerAutograd(`${ns}::sq`, (ctx, g) => g.mul(ctx.savedTensors[0]).mul(2), { setupContext: (ctx, [x]) => ctx.saveForBackward(x) });
      const x = f64([1, 2]).requiresGrad_();
      const y = kd.ops[ns].sq(x);
      y.sum().backward({ retainGraph: true });
      y.sum().backward();
      close(x.grad, [4, 8]);
      assert.throws(() => y.sum().backward(), (e) => e.code === 'KD_INVALID_ARGUMENT' && /backward through the graph a second time/.test(e.message));
      const a = f64([1, 2]).requiresGrad_();
      const b = a.mul(1);
      const z = kd.ops[ns].sq(b);
      b.add_(1);
      assert.throws(() => z.sum().backward(), (e) => e.code === 'KD_INVALID_ARGUMENT' && /modified by an inplace operation/.test(e.message));
    });
  });

  it('registered ops pass through kd_call with their qualified name (dispatch trace)', function () {
    const script = `const kd = require(${JSON.stringify(path.join(__dirname, '..'))});
      kd.library.define('traced::scale(Tensor x, float alpha=1.0) -> Tensor');
      kd.library.impl('traced::scale', 'cpu', (x, a) => x.mul(a));
      kd.ops.traced.scale(kd.ones([2]), 3);`;
    const r = spawnSync(process.execPath, ['-e', script], { env: { ...process.env, KINDLING_DISPATCH_TRACE: '1' }, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const lines = r.stderr.split('\n').filter((l) => l.includes('traced::scale'));
    assert.deepEqual(lines, ['[kindling dispatch] traced::scale: Autograd (fallthrough)'.replace(': Autograd (fallthrough)', ' -> Autograd'),
      '[kindling dispatch] traced::scale -> CPU']);
  });
});
