// api.ts - type test: every public function and method of kindling, type-checked by
// `tsc -p test/types` (part of `npm test`). Nothing here runs; it only has to compile, and the
// lines marked @ts-expect-error must fail to.
import * as kd from 'kindling';
import { Tensor, type DType, type DeviceLike, type DataArray, type NestedArray, type MemoryInfo } from 'kindling';

declare function use(...xs: unknown[]): void;

// ---- creation -------------------------------------------------------------------------------
const a: Tensor = kd.tensor([[1, 2], [3, 4]], { dtype: 'float32' });
const b = kd.tensor([1.5, 2.5]);
const c = kd.tensor(true);
const d = kd.tensor(3, { dtype: 'int32', device: 'cpu' });
const e = kd.tensor(new Float32Array([1, 2, 3]));
const f = kd.tensor(new Uint16Array(4), { dtype: 'float16' });
const g = kd.tensor(new BigInt64Array(2));
const h = kd.tensor([[true, false]]);
const i2 = kd.tensor(a, { device: 'cuda:0' });
// @ts-expect-error: not a dtype
kd.tensor([1], { dtype: 'float128' });
// @ts-expect-error: requiresGrad is a boolean
kd.tensor([1], { requiresGrad: 1 });
// @ts-expect-error: strings are not tensor data
kd.tensor(['a']);

kd.empty(2, 3); kd.empty([2, 3], { dtype: 'float64' });
kd.zeros(2, 3); kd.zeros([2, 3]); kd.zeros([2, 3], { dtype: 'int64', device: 'cpu' }); kd.zeros({ size: [1] });
kd.ones(4); kd.ones([4], { device: 'cuda' });
kd.full([2, 2], 7); kd.full([2], true, { dtype: 'bool' });
kd.arange(10); kd.arange(0, 10, 2); kd.arange(0, 1, 0.1, { dtype: 'float64' }); kd.arange({ start: 5 });
kd.linspace(0, 1, 5);
kd.eye(3); kd.eye(2, 3, { dtype: 'int32' });
kd.rand(2, 2); kd.randn([3]); kd.randint(0, 10, [5]); kd.randint(0, 10, [5], { dtype: 'int32' }); kd.randint(10, [1, 1], { dtype: 'int64' });
kd.emptyLike(a); kd.zerosLike(a); kd.onesLike(a, { dtype: 'float16' }); kd.fullLike(a, 2);
kd.randLike(a); kd.randnLike(a); kd.randintLike(a, 0, 3);
kd.randperm(5); kd.randperm(5, { dtype: 'int32' }); kd.multinomial(kd.rand([2, 3]), 2, true); kd.bernoulli(kd.rand([3]));
kd.bernoulli(kd.rand([3]), { p: 0.5 }); kd.poisson(kd.rand([3])); kd.normal(kd.zeros([3]), kd.ones([3])); kd.normal(0, 1, [2, 3]);
{
  const f: kd.Tensor = kd.zeros([3]).uniform_(-1, 1).normal_(0, 2).bernoulli_(0.5).exponential_(2).geometric_(0.5);
  f.cauchy_().logNormal_(1, 2).random_().random_(10).random_(2, 10).randomInt_(0, 5).bernoulli_(kd.rand([3]));
}
// @ts-expect-error: shapes are numbers
kd.zeros('2');

// ---- tensor metadata and data -----------------------------------------------------------------
const shape: number[] = a.shape;
const dtype: DType = a.dtype;
const device: 'cpu' | `cuda:${number}` = a.device;
const ndim: number = a.ndim;
const version: number = a.version;
const disposed: boolean = a.isDisposed;
const gram: Tensor = a.matmul(a.mT).add(a.T).add(a.H).add(a.mH);
const n: number = a.numel();
use(shape, dtype, device, ndim, version, disposed, n, a.dim(), a.size(), a.size(-1) + 1, a.stride(), a.stride(0) + 1,
  a.storageOffset() + 1, a.isContiguous());
const data: DataArray = a.dataSync();
const nested: NestedArray = a.arraySync();
const x: number = a.sum().item();
const flag: boolean = c.item<boolean>();
use(data, nested, x, flag, a.toString(), String(a));
async function readBack(): Promise<void> {
  const d2: DataArray = await a.dataAsync();
  const n2: NestedArray = await a.array();
  const rows = (await a.array()) as number[][];
  use(d2, n2, rows[0][1]);
}
// t.data is PyTorch's property (a Tensor); p.data = t swaps the storage in
const shared: Tensor = a.data.mul_(2);
a.data = kd.zeros(2, 3);
// @ts-expect-error: not a method any more (the asynchronous read is dataAsync())
a.data();
use(shared);
// Tensor conveniences and legacy constructors
const lst = a.tolist();
const conv: Tensor[] = [a.viewAs(b), a.reshapeAs(b), a.typeAs(b), a.ravel(), a.newZeros(2, 3), a.newOnes([2], { dtype: 'int64' }),
  a.newFull([2], 1), a.newEmpty([1]), a.newTensor([1, 2]), a.float(), a.long(), a.half(), a.type('torch.DoubleTensor'),
  a.type(kd.LongTensor), kd.FloatTensor(2, 3), kd.LongTensor([1, 2]), kd.cuda.FloatTensor([1])];
const tname: string = a.type();
const onGpu: boolean = a.isCuda;
use(lst, conv, tname, onGpu, a.nelement());

// ---- to / devices -----------------------------------------------------------------------------
const dev: DeviceLike = 'cuda:1';
a.to('float64'); a.to('cuda'); a.to(dev); a.to(b); a.to({ dtype: 'float16', device: 'cpu', copy: true });
a.to('int32', { copy: true }); a.to();
a.cpu(); a.cuda(); a.cuda(0);
// @ts-expect-error: not a dtype or device
a.to('gpu');
use(kd.cuda.isAvailable(), kd.cuda.deviceCount() + 1, kd.cuda.unavailableReason().length);
if (kd.cuda.isAvailable()) {
  kd.cuda.setDevice(0); kd.cuda.setDevice('cuda:0');
  const props: kd.CudaDeviceProperties = kd.cuda.getDeviceProperties();
  use(props.name, props.totalMemory, props.major, props.minor, props.multiProcessorCount,
    kd.cuda.currentDevice(), kd.cuda.getDeviceName(0), kd.cuda.getDeviceName(), kd.cuda.synchronize(), kd.cuda.synchronize('cuda'));
  const g = new kd.cuda.CUDAGraph();
  const pool: kd.CudaGraphPoolHandle = kd.cuda.graphPoolHandle();
  const y: Tensor = kd.cuda.graph(g, () => a.mul(2), { pool });
  const later: Promise<Tensor> = kd.cuda.graph(new kd.cuda.CUDAGraph(), async () => a.exp());
  g.replay(); g.reset(); g.captureBegin({ pool: g.pool() }); g.captureEnd();
  const lin = kd.cuda.makeGraphedCallables(new kd.nn.Linear(2, 2), [a]);
  const f: (x: Tensor) => Tensor = kd.cuda.makeGraphedCallables((x: Tensor) => x.relu(), a);
  use(y, later, pool.uses(), pool.device, lin.forward(a), f(a), kd.cuda.isCurrentStreamCapturing(),
    new kd.optim.Adam([a], { capturable: true }));
}

// ---- generated ops: functions and methods ------------------------------------------------------
let t: Tensor = a.add(b);
t = a.add(1); t = a.add(b, { alpha: 2 }); t = kd.add(a, b); t = kd.add(a, 2, { alpha: 0.5 }); t = kd.add({ self: a, other: b });
t = a.sub(b); t = a.mul(2); t = a.div(b); t = a.div(2, { roundingMode: 'floor' }); t = a.pow(2);
t = kd.sub(a, b); t = kd.mul(a, b); t = kd.div(a, b); t = kd.pow(a, 2);
t = kd.pow(2, a); t = kd.sub(1, a, { alpha: 2 }); t = kd.div({ self: 1, other: a }); t = kd.special.xlogy(2, a);
t = a.eq(b); t = a.ne(1); t = a.lt(b); t = a.le(b); t = a.gt(0); t = a.ge(b);
t = kd.eq(a, b); t = kd.ne(a, b); t = kd.lt(a, b); t = kd.le(a, b); t = kd.gt(a, b); t = kd.ge(a, b);
t = a.neg(); t = a.abs(); t = a.exp(); t = a.log(); t = a.sqrt(); t = a.relu(); t = a.sigmoid(); t = a.tanh();
t = kd.neg(a); t = kd.abs(a); t = kd.exp(a); t = kd.log(a); t = kd.sqrt(a); t = kd.relu(a); t = kd.sigmoid(a); t = kd.tanh(a);
t = kd.where(a.gt(0), a, 0);
// in-place ops return the tensor itself
const same: Tensor = a.add_(1).mul_(2).sub_(b, { alpha: 1 }).div_(3).pow_(1);
a.eq_(1); a.ne_(1); a.lt_(1); a.le_(1); a.gt_(1); a.ge_(1);
a.neg_(); a.abs_(); a.exp_(); a.log_(); a.sqrt_(); a.relu_(); a.sigmoid_(); a.tanh_();
a.fill_(0).zero_().copy_(b); a.fill_(kd.tensor(2)); a.fill_({ value: 1 });
use(same);
// @ts-expect-error: unknown option
a.add(b, { beta: 1 });
// @ts-expect-error: strings are not scalars
a.mul('2');

// views and copies
t = a.clone(); t = kd.clone(a); t = a.contiguous();
t = a.view(4); t = a.view(2, -1); t = a.view([4]);
t = a.reshape(4, 1); t = kd.reshape(a, [4]);
t = a.flatten(); t = kd.flatten(a, 0, -1);
t = a.transpose(0, 1); t = kd.transpose(a, 0, 1); t = a.t(); t = kd.t(a);
t = a.permute(1, 0); t = a.permute([1, 0]); t = kd.permute(a, [1, 0]);
t = a.narrow(0, 0, 1); t = kd.narrow(a, 1, 0, 1);
t = a.select(0, 1); t = kd.select(a, 0, 0);
t = a.slice(0, 0, 1); t = a.slice(1, null, null, 2); t = a.slice({ dim: 1, step: 2 });
t = a.unsqueeze(0); t = kd.unsqueeze(a, -1); t = a.squeeze(); t = a.squeeze(0); t = kd.squeeze(a, [0, 1]);
t = a.expand(3, 2, 2); t = a.expand([3, -1, -1]); t = a.expandAs(kd.zeros(3, 2, 2));
t = a.asStrided([2], [1]); t = kd.asStrided(a, [2, 2], [2, 1], 0);
const chunks: Tensor[] = a.chunk(2); kd.chunk(a, 2, 1);
const parts: Tensor[] = a.split(1); kd.split(a, [1, 1], 0);
use(chunks, parts);

// reductions
t = a.sum(); t = a.sum(1); t = a.sum([0, 1], true); t = a.sum({ dim: 1, keepdim: true, dtype: 'float64' }); t = kd.sum(a, 1, true);
t = a.mean(); t = kd.mean(a, 0);
t = a.max(); t = kd.max(a); t = a.min(); t = kd.min(a);
const [values, indices] = a.max(1);
const mx = a.max(1, true);
const mn = kd.min(a, 0);
t = mx.values; t = mx.indices; t = mn.indices; t = a.min({ dim: 0 }).values;
t = a.argmax(); t = a.argmax(1, true); t = kd.argmax(a, 0);
use(values, indices);

// linear algebra
t = a.mm(b.view(2, 1)); t = kd.mm(a, a); t = kd.bmm(a.unsqueeze(0), a.unsqueeze(0)); t = a.bmm(a);
t = a.matmul(b); t = kd.matmul(a, b);

// ---- memory ------------------------------------------------------------------------------------
const kept: Tensor = kd.tidy(() => {
  const y = a.mul(2);
  kd.keep(y.add(1));
  return y;
});
const pair: [Tensor, Tensor] = kd.tidy('named', () => [a.add(1), a.sub(1)] as [Tensor, Tensor]);
const obj: { loss: Tensor; n: number } = kd.tidy(() => ({ loss: a.sum(), n: 1 }));
async function asyncTidy(): Promise<number> {
  const r: Tensor = await kd.tidy(async () => {
    await new Promise((res) => setTimeout(res, 1));
    return a.add(1);
  });
  return r.item();
}
kd.dispose(kept); kd.dispose([pair, obj]); kd.dispose({ a, b });
a.dispose();
{
  using tmp = kd.zeros(3);
  use(tmp.sum());
}
const m: MemoryInfo = kd.memory();
use(m.liveTensors + m.hostBytesInUse + m.hostBytesAllocated + m.hostBytesCached + m.hostBytesPeak + m.cudaBytesInUse);
kd.emptyCache();

// ---- runtime -----------------------------------------------------------------------------------
kd.manualSeed(42); kd.manualSeed(42n);
const seed: bigint = kd.initialSeed();
kd.setNumThreads(4);
const threads: number = kd.getNumThreads();
const dts: readonly DType[] = kd.dtypes;
// PyTorch's dtype aliases are accepted as input; .dtype reports the canonical name
const aliased: DType = kd.ones([2]).to('double').to('half', { copy: true }).to({ dtype: 'long' }).dtype;
use(aliased, kd.zeros([2], { dtype: 'int' }), kd.tensor([1], { dtype: 'short' }), kd.ones([2]).sum({ dtype: 'float' }));
// @ts-expect-error not a dtype
kd.zeros([2], { dtype: 'float128' });
const blas: boolean = kd.build.blas || kd.build.cuda;
const cpuLevel: 'default' | 'avx2' | 'avx512' = kd.build.cpuCapability;
const bf16Gemm: 'amx' | 'avx512bf16' | 'none' = kd.build.bf16Gemm;
const addonFrom: 'prebuilt' | 'build' = kd.build.binary;
const blasName: string = kd.build.blasLibrary ?? kd.build.binaryPath;
const ver: string = kd.version;
const maybe: unknown = a;
if (kd.isTensor(maybe)) use(maybe.shape);
use(seed, threads, dts, blas, cpuLevel, bf16Gemm, addonFrom, blasName, ver, readBack, asyncTidy);

// ---- errors ------------------------------------------------------------------------------------
try {
  a.view(3);
} catch (err) {
  if (err instanceof kd.KindlingError) use(err.code === 'KD_SHAPE_MISMATCH', err.message);
  if (err instanceof kd.KindlingTypeError) use(err.code, err instanceof TypeError);
  if (err instanceof kd.KindlingRangeError) use(err.code, err instanceof RangeError);
}
const anyKindling = (err: unknown): string | undefined => (err instanceof kd.KindlingError ? err.code : undefined);
const typeErr: kd.KindlingError = new kd.KindlingTypeError('bad type');
const rangeErr: kd.KindlingError & RangeError = new kd.KindlingRangeError('bad index');
const typeName: 'KindlingTypeError' = new kd.KindlingTypeError('x').name;
use(anyKindling(typeErr), rangeErr.code, typeName);
const custom = new kd.KindlingError('custom', 'KD_NOT_SUPPORTED');
use(custom, d, e, f, g, h, i2);

// indexing (lib/indexing.js)
{
  const x = kd.zeros([2, 3, 4]);
  const a: kd.Tensor = x.index([0, kd.slice(1, null, 2), null, '...', [0, 1]]);
  x.indexPut_([kd.slice(), 0], 1);
  x.indexPut_([kd.tensor([0, 1])], kd.ones([3, 4]), true);
  void a;
}

// autograd
{
  const w = kd.tensor([1, 2, 3], { requiresGrad: true });
  const loss: kd.Tensor = w.mul(w).sum();
  loss.backward();
  const g: kd.Tensor | null = w.grad;
  const name: string | undefined = loss.gradFn?.name;
  const [dw] = kd.autograd.grad(w.exp().sum(), [w], null, { createGraph: true });
  const ok: boolean = kd.autograd.gradcheck((x: kd.Tensor) => x.sin(), [kd.randn([3], { dtype: 'float64' }).requiresGrad_()]);
  const y = kd.noGrad(() => w.mul(2));
  const h = w.registerHook((grad) => grad.mul(2));
  h.remove();
  class Square extends kd.autograd.Function {
    static forward(ctx: kd.autograd.FunctionCtx, x: kd.Tensor) { ctx.saveForBackward(x); return x.mul(x); }
    static backward(ctx: kd.autograd.FunctionCtx, g: kd.Tensor) { const [x] = ctx.savedTensors; return g.mul(x!).mul(2); }
  }
  const s: kd.Tensor = Square.apply(w);
  void [g, name, dw, ok, y, s];
}

// ---- kd.nn modules --------------------------------------------------------------------------
{
  const nn = kd.nn;
  class Net extends kd.nn.Module {
    fc = new nn.Linear(4, 8);
    act = new nn.ReLU();
    out = new nn.Linear(8, 2, { bias: false });
    forward(x: Tensor): Tensor { return this.out(this.act(this.fc(x))); }
  }
  const net = new Net();
  const y: Tensor = net.forward(kd.zeros(1, 4));
  const y2 = net(kd.zeros(1, 4));
  const params: kd.nn.Parameter[] = net.parameters();
  const named: [string, kd.nn.Parameter][] = net.namedParameters();
  const sd: Record<string, Tensor> = net.stateDict();
  const r: { missingKeys: string[]; unexpectedKeys: string[] } = net.loadStateDict(sd, { strict: false });
  net.train().eval().to('float64').to({ device: 'cpu' });
  net.zeroGrad({ setToNone: true });
  const h = net.registerForwardHook((m, args, out) => out);
  h.remove();
  net.registerForwardPreHook((m, args) => args);
  net.registerFullBackwardHook((m, gi, go) => gi.map((g) => (g === null ? null : g.mul(2))));
  const w0: kd.nn.Parameter = net.getParameter('fc.weight');
  net.toEmpty({ device: 'cpu' }).shareMemory().type('float64').zeroGrad(false);
  net._registerStateDictHook((m, sd2, prefix) => sd2);
  net.registerLoadStateDictPostHook((m, keys) => { keys.missingKeys.length = 0; });
  kd.nn.modules.module.registerModuleForwardHook((m, args, out) => out).remove();
  use(w0);
  const plist = new nn.ParameterList([kd.zeros(2)]);
  const pdict = new nn.ParameterDict({ a: kd.zeros(1) });
  const pfirst: kd.nn.Parameter = plist.at(0);
  const lazyOut: Tensor = new nn.LazyLinear(3)(kd.zeros(2, 5));
  const lc = new nn.LazyConv2d(4, 3, { padding: 1 });
  const LazyLN = nn.lazy(nn.LayerNorm, 'normalizedShape', (x) => x.shape[x.ndim - 1]);
  use(pdict.keys(), pfirst, lazyOut, lc.hasUninitializedParams(), new LazyLN());
  const seq = new nn.Sequential(new nn.Conv2d(1, 4, 3, { padding: 1 }), new nn.BatchNorm2d(4), new nn.MaxPool2d(2), new nn.Flatten(),
    new nn.Linear(16, 10), new nn.Dropout(0.1), new nn.LogSoftmax(1));
  const z: Tensor = seq(kd.zeros(2, 1, 4, 4));
  const first: kd.nn.Module = seq[0];
  const list = new nn.ModuleList([new nn.GELU(), new nn.SiLU()]);
  const dict = new nn.ModuleDict({ a: new nn.Tanh(), b: new nn.Sigmoid() });
  const mha = new nn.MultiheadAttention(8, 2, { batchFirst: true });
  const [att, w] = mha(kd.zeros(1, 3, 8), kd.zeros(1, 3, 8), kd.zeros(1, 3, 8), { needWeights: true });
  const enc = new nn.TransformerEncoderLayer(8, 2, { dimFeedforward: 16, normFirst: true, activation: 'gelu' });
  const e2: Tensor = enc(kd.zeros(3, 1, 8), { srcMask: null });
  const encoder = new nn.TransformerEncoder(enc, 2, new nn.LayerNorm(8), { enableNestedTensor: false });
  const mem: Tensor = encoder(kd.zeros(3, 1, 8), { srcKeyPaddingMask: kd.zeros([1, 3], { dtype: 'bool' }) });
  const decoder = new nn.TransformerDecoder(new nn.TransformerDecoderLayer(8, 2, { dimFeedforward: 16, batchFirst: false }), 2);
  const d2: Tensor = decoder(kd.zeros(2, 1, 8), mem, { tgtMask: nn.Transformer.generateSquareSubsequentMask(2) });
  const tr = new nn.Transformer({ dModel: 8, nhead: 2, numEncoderLayers: 1, numDecoderLayers: 1, dimFeedforward: 16, dropout: 0 });
  const t2: Tensor = tr(kd.zeros(3, 1, 8), kd.zeros(2, 1, 8), { tgtMask: nn.Transformer.generateSquareSubsequentMask(2, { dtype: 'float64' }) });
  const lossFn = new nn.CrossEntropyLoss({ labelSmoothing: 0.1 });
  const loss: Tensor = lossFn(z, kd.zeros([2], { dtype: 'int64' }));
  const p = new nn.Parameter(kd.zeros(3));
  const p2: kd.nn.Parameter = nn.Parameter(kd.zeros(3), false);
  const up = new nn.UninitializedParameter({ dtype: 'float64' });
  const upLazy: boolean = nn.parameter.isLazy(up);
  const upDone: kd.nn.Parameter = up.materialize([2, 3]);
  const ub: Tensor = new nn.UninitializedBuffer().materialize(4);
  void upLazy; void upDone; void ub;
  const g: Tensor | null = p.grad;
  nn.init.kaimingUniform_(p, { a: Math.sqrt(5) });
  const same: kd.nn.Parameter = nn.init.xavierUniform_(p2);
  const gain: number = nn.init.calculateGain('leaky_relu', 0.2);
  nn.init.orthogonal_(p, 2); nn.init.sparse_(kd.empty(4, 3), 0.5); nn.init.dirac_(kd.empty(2, 2, 3), { groups: 2 }); nn.init.eye_(kd.empty(2, 2));
  const norm: Tensor = nn.utils.clipGradNorm_(net.parameters(), 1.0);
  const wn = nn.utils.weightNorm(new nn.Linear(2, 2), 'weight', null);
  nn.utils.removeSpectralNorm(nn.utils.spectralNorm(new nn.Linear(2, 2), { nPowerIterations: 2 }));
  const skipped: kd.nn.Linear = nn.utils.skipInit(nn.Linear, 2, 3);
  const fusedConv = nn.utils.fusion.fuseConvBnEval(new nn.Conv2d(1, 2, 3).eval(), new nn.BatchNorm2d(2).eval());
  const fc: Tensor = nn.utils.stateless.functionalCall(wn, { weight_g: kd.ones(2, 1) }, [kd.zeros(1, 2)]);
  nn.utils.prune.l1Unstructured(skipped, 'weight', 0.3);
  nn.utils.prune.globalUnstructured([[skipped, 'weight'], [wn, 'bias']], nn.utils.prune.L1Unstructured, { amount: 2 });
  const pruned: boolean = nn.utils.prune.isPruned(skipped);
  use(fusedConv, fc, pruned);
  class Sym extends nn.Module { forward(X: Tensor): Tensor { return X.triu().add(X.triu(1).mT); } }
  const pl = nn.utils.parametrize.registerParametrization(new nn.Linear(3, 3), 'weight', new Sym());
  const isP: boolean = nn.utils.parametrize.isParametrized(pl, 'weight');
  const cachedW: Tensor = nn.utils.parametrize.cached(() => pl.weight);
  const plType = nn.utils.parametrize.typeBeforeParametrizations(pl);
  const plTo: kd.nn.Linear = nn.utils.parametrize.transferParametrizationsAndParams(pl, new nn.Linear(3, 3), 'weight');
  void plType; void plTo;
  nn.utils.parametrize.removeParametrizations(pl, 'weight', { leaveParametrized: false });
  nn.utils.parametrizations.orthogonal(new nn.Linear(4, 4), 'weight', 'cayley');
  nn.utils.parametrizations.spectralNorm(new nn.Linear(4, 4));
  use(isP, cachedW);
  nn.utils.clipGradValue_(net.parameters(), 0.5);
  const f: Tensor = kd.nn.functional.relu(y);
  use(y, y2, params, named, r, z, first, list, dict, att, w, e2, loss, g, same, gain, norm, f,
    new nn.Embedding(10, 3, { paddingIdx: 0 }), new nn.Bilinear(2, 3, 4), new nn.GroupNorm(2, 4), new nn.LayerNorm([4]),
    new nn.AvgPool2d(2), new nn.AdaptiveAvgPool2d([1, 1]), new nn.Conv1d(1, 1, 3), new nn.ConvTranspose2d(1, 1, 2, { stride: 2 }),
    new nn.LeakyReLU(0.2), new nn.Softmax(-1), new nn.Identity(), new nn.Unflatten(1, [2, 2]), new nn.MSELoss(), new nn.L1Loss('sum'),
    new nn.SmoothL1Loss({ beta: 0.5 }), new nn.NLLLoss(), new nn.BCELoss(), new nn.BCEWithLogitsLoss({ posWeight: kd.ones(1) }));
  // @ts-expect-error: a Linear takes numbers
  new nn.Linear('4', 8);
  // recurrent layers and packed sequences
  const lstm = new nn.LSTM(8, 16, 2, { batchFirst: true, projSize: 4 });
  const [lo, [lh, lcell]] = lstm(kd.zeros(2, 5, 8));
  const gru = new nn.GRU(8, 16, { bidirectional: true });
  const packedIn = nn.utils.rnn.packPaddedSequence(kd.zeros(5, 2, 8), [5, 3], { enforceSorted: false });
  const [po, ph] = gru(packedIn);
  const [padded, lens] = nn.utils.rnn.padPackedSequence(po, { batchFirst: true, totalLength: 6 });
  const [data, batchSizes] = po;
  const rnnOut: [Tensor, Tensor] = new nn.RNN(8, 4, { nonlinearity: 'relu' })(kd.zeros(5, 8));
  const [ch, cc] = new nn.LSTMCell(8, 4)(kd.zeros(2, 8), [kd.zeros(2, 4), kd.zeros(2, 4)]);
  const gh: Tensor = new nn.GRUCell(8, 4, false)(kd.zeros(8));
  const ps: kd.nn.utils.rnn.PackedSequence = nn.utils.rnn.packSequence([kd.zeros(3, 2), kd.zeros(1, 2)]);
  const seqs: Tensor[] = nn.utils.rnn.unpackSequence(ps);
  const wIh: kd.nn.Parameter = lstm.allWeights[0][0];
  use(lo, lh, lcell, ph, padded, lens, data, batchSizes, rnnOut, ch, cc, gh, seqs, wIh, nn.utils.rnn.padSequence(seqs, { batchFirst: true }),
    lstm.weightIhL0, new nn.RNNCell(2, 3, true, 'tanh'));
  // @ts-expect-error: an LSTM state is [h0, c0]
  lstm.forward(kd.zeros(2, 5, 8), kd.zeros(2, 2, 4));
}

// ---- data ----------------------------------------------------------------------------------
{
  const ds = new kd.data.TensorDataset(kd.zeros(10, 3), kd.arange(10));
  const loader = new kd.data.DataLoader<Tensor[]>(ds, { batchSize: 4, shuffle: true, seed: 1, dropLast: false, prefetch: 2 });
  const nb: number = loader.length;
  for (const [x, y] of loader) use(x.shape, y.dtype);
  (async () => { for await (const [x] of loader) use(x); })();
  const [train, val] = kd.data.randomSplit(ds, [0.8, 0.2], { seed: 0 });
  const g = new kd.data.Generator(3);
  const perm: number[] = g.randperm(5);
  const perm32: Uint32Array = g.permutation(5);
  const batch = kd.data.defaultCollate([{ a: 1 }, { a: 2 }]);
  const sub = new kd.data.Subset(ds, [0, 1]);
  class Squares extends kd.data.Dataset<number> {
    get length() { return 4; }
    get(i: number) { return i * i; }
  }
  const custom = new kd.data.DataLoader(new Squares(), { collate: (s: number[]) => s.length });
  use(nb, train, val, perm, batch, sub, custom);
  const gathered: Promise<Tensor[]> = kd.data.gatherRows([kd.zeros(4, 2)], [3, 0]);
  const rows: Tensor[] = ds.rowTensors();
  class Rows extends kd.data.Dataset<{ x: Tensor }> {
    get length() { return 2; }
    get(i: number) { return { x: kd.zeros(2) }; }
    rowTensors() { return { x: kd.zeros(2, 2) }; }
  }
  new kd.data.DataLoader(new Rows(), { batchSize: 2 });
  use(gathered, rows);
  // @ts-expect-error: gatherRows takes an array of tensors
  kd.data.gatherRows(kd.zeros(2), [0]);
  // @ts-expect-error: batchSize is a number
  new kd.data.DataLoader(ds, { batchSize: '4' });
  // samplers, other datasets, worker threads
  const gen = new kd.data.Generator(0).manualSeed(42);
  const rs = new kd.data.RandomSampler(ds, { replacement: true, numSamples: 20, generator: gen });
  const ws = new kd.data.WeightedRandomSampler([1, 2, 3], 5, true, gen);
  const bsmp = new kd.data.BatchSampler(new kd.data.SequentialSampler(ds), 4, false);
  const srs = new kd.data.SubsetRandomSampler([1, 3, 5], gen);
  const dpNet = new kd.nn.DataParallel(new kd.nn.Linear(3, 2), { deviceIds: [0, 'cuda:1'], outputDevice: -1, dim: 0 });
  const dpIds: number[] = dpNet.deviceIds;
  const dpLin: InstanceType<typeof kd.nn.Linear> = dpNet.module;
  const dpOut: Tensor = dpNet(kd.ones([4, 3]));
  const dpF: Tensor = kd.nn.parallel.dataParallel(dpLin, [kd.ones([4, 3])], { outputDevice: 0 });
  const sbn = kd.nn.SyncBatchNorm.convertSyncBatchnorm(new kd.nn.Sequential(new kd.nn.BatchNorm1d(3)));
  const sbn2 = new kd.nn.SyncBatchNorm(4, { eps: 1e-3, momentum: null, processGroup: null });
  const sbnMom: number | null = sbn2.momentum;
  const dsmp = new kd.data.DistributedSampler(ds, { numReplicas: 2, rank: 1, seed: 3, dropLast: true });
  dsmp.setEpoch(2);
  const dsmpN: number = dsmp.numSamples + dsmp.totalSize + new kd.utils.data.DistributedSampler(ds, 2, 0).length;
  new kd.data.DataLoader(ds, { sampler: dsmp, batchSize: 2 });
  const ordered: number[] = [...rs, ...ws, ...srs];
  new kd.data.DataLoader(ds, { sampler: rs, batchSize: 2, generator: gen, pinMemory: false });
  new kd.data.DataLoader(ds, { batchSampler: bsmp });
  const stream = new kd.data.ChainDataset<number>([[1, 2], [3]]);
  const cat = new kd.data.ConcatDataset<Tensor[]>([ds, ds]);
  const workers = new kd.data.DataLoader({ module: './ds.js', export: 'make', args: [100] }, {
    batchSize: 8, numWorkers: 2, prefetchFactor: 4, persistentWorkers: true, timeout: 30,
    workerInitFn: (id: number) => use(id), collateFn: (s: unknown[]) => s.length,
  });
  (async () => { await workers.shutdown(); })();
  const info = kd.data.getWorkerInfo();
  if (info) use(info.id, info.numWorkers, info.seed);
  const conv = kd.data.defaultConvert({ a: new Float32Array(2) });
  const split = kd.data.randomSplit(ds, [5, 5], gen);
  const m: number[] = gen.multinomial([1, 2], 2, false);
  const r64: bigint = gen.random64();
  use(ordered, stream, cat, conv, split, m, r64, cat.cumulativeSizes);
  const viaUtils: typeof kd.data.DataLoader = kd.utils.data.DataLoader;
  use(viaUtils);
  // @ts-expect-error: numWorkers is a number
  new kd.data.DataLoader(ds, { numWorkers: '2' });
}

// ---- serialization -------------------------------------------------------------------------
{
  const sd = { 'fc.weight': kd.zeros(2, 2), nested: { bias: kd.zeros(2) } };
  kd.saveSync(sd, '/tmp/x.safetensors', { metadata: { format: 'pt' } });
  const loaded: Record<string, Tensor> = kd.loadSync('/tmp/x.safetensors', { device: 'cpu' });
  const p: Promise<void> = kd.save(sd, '/tmp/x.safetensors');
  const q: Promise<Record<string, Tensor>> = kd.load('/tmp/x.safetensors');
  const bytes: Buffer = kd.safetensors.serialize(sd);
  const back: Record<string, Tensor> = kd.safetensors.deserialize(bytes);
  const meta: Record<string, string> = kd.safetensors.loadMetadata('/tmp/x.safetensors');
  kd.saveCheckpointSync({ model: sd, epoch: 3 }, '/tmp/c.safetensors');
  const model = new kd.nn.Linear(2, 2);
  kd.saveSync(model, '/tmp/m.safetensors');
  const r: Promise<void> = kd.saveCheckpoint({ model, epoch: 3 }, '/tmp/c.safetensors');
  use(r);
  const ck = kd.loadCheckpointSync('/tmp/c.safetensors');
  const epoch: number = ck.epoch;
  use(loaded, p, q, back, meta, epoch);
  // @ts-expect-error: metadata values are strings
  kd.saveSync(sd, '/tmp/x.safetensors', { metadata: { n: 1 } });
}

// optimizers and lr schedulers (lib/optim/)
{
  const w = kd.zeros([3]); // (autograd members of Tensor are not declared yet)
  const b = kd.zeros([1]);
  const sgd = new kd.optim.SGD([{ params: [w] }, { params: b, lr: 0.01 }], { lr: 0.1, momentum: 0.9, nesterov: true });
  sgd.paramGroups[0].lr = 0.05;
  sgd.zeroGrad({ setToNone: false });
  const loss: kd.Tensor = sgd.step(() => w.sum());
  sgd.step();
  const adam = new kd.optim.AdamW([w, b], { lr: 1e-3, betas: [0.9, 0.99], amsgrad: true });
  const sd = adam.stateDict();
  const ids: number[] = sd.paramGroups[0].params;
  adam.loadStateDict(sd);
  new kd.optim.RMSprop([w], { centered: true });
  new kd.optim.Adagrad([w], { lrDecay: 0.01 });
  const S = kd.optim.lrScheduler;
  const s1 = new S.StepLR(sgd, 10, { gamma: 0.5 });
  const s2 = new S.LinearLR(sgd, { startFactor: 0.1, totalIters: 5 });
  const seq = new S.SequentialLR(sgd, [s2, s1], [5]);
  seq.step();
  const lrs: number[] = seq.getLastLr();
  new S.OneCycleLR(adam, 0.01, { totalSteps: 100 }).step();
  new S.ReduceLROnPlateau(adam, { mode: 'max', patience: 2 }).step(0.5);
  new S.CosineAnnealingLR(sgd, 50, { etaMin: 1e-4 });
  new S.MultiStepLR(sgd, [3, 6]);
  new S.ExponentialLR(sgd, 0.9);
  use(loss, ids, lrs);
  new kd.optim.Adadelta([w], { rho: 0.95, foreach: null });
  new kd.optim.Adamax([w], 2e-3);
  new kd.optim.ASGD([w], { t0: 100, lambd: 1e-4 });
  new kd.optim.NAdam([w], { momentumDecay: 4e-3 });
  new kd.optim.RAdam([w], { betas: [0.9, 0.999] });
  new kd.optim.Rprop([w], { etas: [0.5, 1.2], stepSizes: [1e-6, 50] });
  new kd.optim.SparseAdam([w]);
  const lbfgs = new kd.optim.LBFGS([w], { historySize: 10, lineSearchFn: 'strong_wolfe' });
  const l2: kd.Tensor = lbfgs.step(() => w.sum());
  new S.LambdaLR(sgd, (e) => 0.95 ** e);
  new S.MultiplicativeLR(sgd, [(e) => 0.9, (e) => 0.99]);
  new S.ConstantLR(sgd, { factor: 0.5, totalIters: 4 });
  new S.PolynomialLR(sgd, { totalIters: 10, power: 2 });
  new S.CyclicLR(sgd, 0.01, 0.1, { stepSizeUp: 10, mode: 'exp_range', gamma: 0.99 });
  const warm = new S.CosineAnnealingWarmRestarts(sgd, 10, { TMult: 2 });
  warm.step(1.5);
  new S.ChainedScheduler([s1, s2]).step();
  const model = new kd.nn.Linear(3, 1);
  const avg = new kd.optim.swaUtils.AveragedModel(model, { avgFn: (a, c, n) => a.add(c.sub(a).div(n.add(1))) });
  avg.updateParameters(model);
  new kd.optim.swaUtils.SWALR(sgd, 0.05, { annealEpochs: 5, annealStrategy: 'linear' }).step();
  kd.optim.swaUtils.updateBn([kd.randn(2, 3)], avg);
  use(l2);
}

// the profiler (lib/profiler/)
{
  const x = kd.randn(4, 3);
  const prof: kd.profiler.Profile = kd.profiler.profile({ activities: ['cpu', kd.profiler.ProfilerActivity.CUDA], recordShapes: true }, () => x.add(x));
  const pending: Promise<kd.profiler.Profile> = kd.profiler.profile({}, async () => { await x.dataAsync(); });
  const rows: kd.profiler.ProfilerKeyAverage[] = prof.keyAverages({ groupByInputShape: true });
  const text: string = prof.keyAverages().table({ sortBy: 'self_cpu_time_total', rowLimit: 10 });
  const ev: kd.profiler.ProfilerEvent = prof.events()[0];
  const y: Tensor = kd.profiler.recordFunction('step', () => x.mul(2));
  const range = kd.profiler.recordFunction('load');
  range.end();
  const stacks: string = kd.profiler.profile({ withStack: true }, () => x.add(x)).table({ groupByStackN: 2 });
  const manual = kd.profiler.profile().start();
  manual.stop().exportChromeTrace('/tmp/trace.json');
  const gpu: number | null = ev.cudaUs;
  use(pending, rows, text, ev.name, y, gpu, stacks, ev.stack);
}

// mixed precision (lib/autocast.js, lib/amp.js)
{
  const w = kd.randn(3, 3).requiresGrad_();
  const opt = new kd.optim.SGD([w], { lr: 0.1 });
  const scaler = new kd.amp.GradScaler({ initScale: 1024, growthInterval: 100 });
  const loss: Tensor = kd.autocast({ deviceType: 'cpu', dtype: 'bfloat16', cacheEnabled: true }, () => kd.mm(w, w).sum());
  const p: Promise<number> = kd.autocast({ deviceType: 'cuda', enabled: false }, async () => 1);
  scaler.scale(loss).backward();
  const [a, b]: Tensor[] = scaler.scale([loss, loss]);
  scaler.unscale_(opt);
  scaler.step(opt);
  scaler.update();
  scaler.update(512);
  const s: number = scaler.getScale();
  const sd = scaler.stateDict();
  scaler.loadStateDict(sd);
  const on: boolean = kd.isAutocastEnabled('cpu');
  const dt: kd.DType = kd.getAutocastDtype('cuda');
  kd.amp.autocast({ deviceType: 'cpu' }, () => 0);
  // @ts-expect-error an unknown device type
  kd.autocast({ deviceType: 'tpu' }, () => 0);
  use(p, a, b, s, on, dt);
}

// search and counting: named tuples, numbers on either side, options objects
{
  const x = kd.tensor([3, 1, 3, 2], { dtype: 'float64' });
  const i: Tensor = kd.searchsorted(kd.tensor([1, 2, 3]), x, { right: true, sorter: null });
  const j: Tensor = kd.searchsorted(kd.tensor([1, 2, 3]), 2.5, { side: 'left', outInt32: true });
  const b: Tensor = kd.bucketize(x, kd.tensor([0, 2]), { right: true });
  const h: Tensor = x.histc(4, 0, 3);
  const c: Tensor = kd.bincount(kd.tensor([1, 2, 2]), null, 4);
  const m: Tensor = kd.isin(x, 3, { invert: true });
  const k = x.kthvalue(2, 0, true);
  const v: Tensor = k.values;
  const mo: Tensor = kd.mode(x).indices;
  const mm = x.aminmax({ dim: 0 });
  const lo: Tensor = mm.min;
  const q: Tensor = kd.quantile(x, kd.tensor([0.25, 0.5], { dtype: 'float64' }), 0, false, { interpolation: 'midpoint' });
  const nq: Tensor = x.nanquantile(0.5);
  const l: Tensor = x.logcumsumexp(0);
  const u = x.uniqueConsecutive({ returnCounts: true });
  use(i, j, b, h, c, m, v, mo, lo, mm.max, q, nq, l, u);
}
// special functions: kd.special's own ops, its aliases (the ops' signatures), and the named tuple of frexp
{
  const x = kd.tensor([0.5, 1.5]);
  const psi: Tensor = kd.special.psi(x);
  const l: Tensor = kd.special.logNdtr(x);
  const z: Tensor = kd.special.zeta(x, 2);
  const e: Tensor = kd.special.logsumexp(x, [0], true);
  const pg: Tensor = x.polygamma(2);
  const lg: Tensor = kd.logit(x, 1e-6);
  const t: Tensor = kd.special.chebyshevPolynomialT(x, 3);
  const fr = kd.frexp(x);
  const m: Tensor = fr.mantissa;
  const ex: Tensor = fr.exponent;
  // @ts-expect-error polygamma takes the order first
  kd.polygamma(x, 2);
  use(psi, l, z, e, pg, lg, t, m, ex);
}
// shape and construction ops: spread or listed tensors, JS booleans, tensordot's dims
{
  const x = kd.arange(12).reshape([3, 4]);
  const v = kd.tensor([1, 2, 3]);
  const g1: Tensor[] = kd.meshgrid(v, v);
  const g2: Tensor[] = kd.meshgrid([v, v], { indexing: 'xy' });
  const g3: Tensor[] = kd.meshgrid(v, v, { indexing: 'xy' });
  const cp: Tensor = kd.cartesianProd(v, v);
  const bd: Tensor = kd.blockDiag(x, v);
  const parts: Tensor[] = x.tensorSplit([1, 2], 1);
  const close: boolean = kd.allclose(x, x, 1e-5, 1e-8, true);
  const same: boolean = x.equal(x);
  const td: Tensor = kd.tensordot(x, x, [[0, 1], [0, 1]]);
  const td2: Tensor = kd.tensordot(x, x.t(), 1);
  const d: Tensor = kd.cdist(x, x, 2, 'use_mm_for_euclid_dist');
  const c: Tensor = x.cov({ correction: 0, fweights: kd.tensor([1, 1, 1, 1]) });
  const ti: Tensor = kd.trilIndices(3, 3, 0, { dtype: 'int32' });
  // @ts-expect-error allclose is a boolean, not a Tensor
  const notTensor: Tensor = kd.allclose(x, x);
  use(g1, g2, g3, cp, bd, parts, close, same, td, td2, d, c, ti, notTensor);
}

// kd.library: an op defined at run time, with its backward and autocast policy.
export function libraryOps(x: Tensor): void {
  const scale: kd.LibraryOp = kd.library.define('tsdoc::scale(Tensor x, float alpha=1.0) -> Tensor');
  kd.library.impl('tsdoc::scale', ['cpu', 'cuda'], (t: Tensor, alpha: number) => t.mul(alpha));
  kd.library.registerAutograd('tsdoc::scale', (ctx, g) => [g.mul(ctx.alpha as number), null],
    { setupContext: (ctx, [, alpha]) => { ctx.alpha = alpha; } });
  kd.library.registerAutocast('tsdoc::scale', { cuda: 'fp32' });
  const y = kd.ops.tsdoc.scale(x, 2) as Tensor;
  // @ts-expect-error the device is 'cpu' or 'cuda'
  kd.library.impl('tsdoc::scale', 'tpu', (t: Tensor) => t);
  const ext: kd.CppExtension = kd.utils.cppExtension.load({ name: 'demo', sources: ['demo.c'], extraCflags: ['-O3'] });
  const built: boolean = ext.built;
  const cu = kd.utils.cppExtension.build({ name: 'democu', sources: ['demo.c', 'demo.cu'], extraCflags: ['-DWITH_CUDA'], extraCudaCflags: ['-lineinfo'] });
  const soPath: string = cu.path;
  // @ts-expect-error extraCudaCflags is a list of strings
  kd.utils.cppExtension.load({ name: 'democu', sources: ['demo.cu'], extraCudaCflags: '-lineinfo' });
  use(scale, y, ext.ops.demo, built, soPath);
}

// convolution, pooling, padding, normalisation and upsampling (types/nn.d.ts)
{
  const x5 = kd.randn(1, 2, 4, 4, 4);
  const c3: kd.Tensor = new kd.nn.Conv3d(2, 3, 3, { padding: 'same', paddingMode: 'circular' })(x5);
  const ct: kd.Tensor = new kd.nn.ConvTranspose3d(2, 2, 3, { stride: 2 })(x5, [9, 9, 9]);
  const ct1: kd.Tensor = new kd.nn.ConvTranspose1d(2, 2, 3)(kd.randn(1, 2, 5));
  const f3: kd.Tensor = kd.nn.functional.conv3d(x5, kd.randn(3, 2, 3, 3, 3), null, 1, 'same');
  const [pv, pi] = kd.nn.functional.maxPool3dWithIndices(x5, 2);
  const up: kd.Tensor = kd.nn.functional.maxUnpool3d(pv, pi, 2, { outputSize: [4, 4, 4] });
  const am = kd.nn.functional.adaptiveMaxPool2dWithIndices(kd.randn(1, 1, 5, 5), [2, null]).indices;
  const cols: kd.Tensor = kd.nn.functional.unfold(kd.randn(1, 2, 5, 5), 3, { padding: 1 });
  const img: kd.Tensor = kd.nn.functional.fold(cols, [5, 5], 3, { padding: 1 });
  const inorm: kd.Tensor = new kd.nn.InstanceNorm2d(2, { affine: true })(kd.randn(1, 2, 3, 3));
  const inf: kd.Tensor = kd.nn.functional.instanceNorm(kd.randn(1, 2, 3), { eps: 1e-3 });
  const lrn: kd.Tensor = new kd.nn.LocalResponseNorm(3, { alpha: 0.1 })(kd.randn(1, 4, 3, 3));
  const pads: kd.Tensor[] = [new kd.nn.ReflectionPad2d(1), new kd.nn.ReplicationPad3d([1, 1, 0, 0, 1, 1]), new kd.nn.ZeroPad2d(2),
    new kd.nn.ConstantPad1d(2, 0.5)].map((m) => m(kd.randn(1, 1, 3, 3, 3)));
  const ups: kd.Tensor = new kd.nn.Upsample({ scaleFactor: 2, mode: 'bilinear' })(kd.randn(1, 1, 3, 3));
  const pools: kd.nn.Module[] = [new kd.nn.MaxPool1d(2), new kd.nn.AvgPool3d(2, { divisorOverride: 3 }), new kd.nn.AdaptiveMaxPool3d(2, true),
    new kd.nn.LPPool2d(2, 3), new kd.nn.FractionalMaxPool2d(2, { outputRatio: 0.5 }), new kd.nn.MaxUnpool2d(2), new kd.nn.BatchNorm3d(2),
    new kd.nn.Fold(4, 2), new kd.nn.Unfold(2), new kd.nn.UpsamplingBilinear2d({ scaleFactor: 2 }), new kd.nn.CrossMapLRN2d(3)];
  void [c3, ct, ct1, f3, up, am, img, inorm, inf, lrn, pads, ups, pools];
}

// kd.nn activations, dropouts, losses and layers beyond the first set
{
  const nn = kd.nn;
  const F = kd.nn.functional;
  const x = kd.randn([2, 4, 3]);
  const acts: kd.nn.Module[] = [new nn.ELU(0.5), new nn.CELU({ alpha: 2 }), new nn.SELU(), new nn.GLU(1), new nn.Hardshrink(), new nn.Softshrink(0.2),
    new nn.Hardtanh(-2, 2), new nn.ReLU6(true), new nn.LogSigmoid(), new nn.Mish(), new nn.Softplus(2, 10), new nn.Softsign(), new nn.Tanhshrink(),
    new nn.Threshold(0.1, 0), new nn.RReLU(0.1, 0.3), new nn.Softmin(1), new nn.Softmax2d(), new nn.PReLU(4, 0.1, { dtype: 'float64' }),
    new nn.Dropout1d(0.2), new nn.Dropout2d(), new nn.Dropout3d({ p: 0.1 }), new nn.AlphaDropout(0.3), new nn.FeatureAlphaDropout()];
  const y: kd.Tensor = new nn.ELU()(x);
  void acts; void y;
  const t = kd.tensor([1, -1]);
  const l1: kd.Tensor = new nn.KLDivLoss({ reduction: 'batchmean', logTarget: true })(x, x);
  const l2: kd.Tensor = new nn.GaussianNLLLoss({ full: true })(x, x, x.abs());
  const l3: kd.Tensor = new nn.CosineEmbeddingLoss(0.1)(x.select(2, 0), x.select(2, 1), t);
  const l4: kd.Tensor = new nn.TripletMarginWithDistanceLoss({ distanceFunction: (a, b) => F.pairwiseDistance(a, b), swap: true })(x, x, x);
  const l5: kd.Tensor = new nn.CTCLoss({ blank: 0, zeroInfinity: true })(x.logSoftmax(2), kd.tensor([[1], [2], [1], [2]]), [2, 2, 2, 2], [1, 1, 1, 1]);
  const l6: kd.Tensor = F.ctcLoss(x.logSoftmax(2), kd.tensor([1, 2]), kd.tensor([2, 2, 2, 2]), [1, 1, 0, 0], { reduction: 'sum' });
  const ag: kd.Tensor = F.affineGrid(kd.zeros([1, 2, 3]), [1, 1, 4, 4], false);
  const gs: kd.Tensor = F.gridSample(kd.zeros([1, 1, 4, 4]), ag, { mode: 'bicubic', paddingMode: 'reflection', alignCorners: false });
  const gs2: kd.Tensor = F.gridSample(kd.zeros([1, 1, 4, 4]), F.affineGrid(kd.zeros([1, 2, 3]), [1, 1, 2, 2], { alignCorners: true }), 'nearest');
  const lin: kd.nn.Linear = new kd.nn.Linear(2, 2).xpu().ipu(0);
  void gs; void gs2; void lin;
  void l1; void l2; void l3; void l4; void l5; void l6;
  const losses: kd.nn.Module[] = [new nn.HuberLoss('sum', 0.5), new nn.PoissonNLLLoss({ logInput: false }), new nn.MarginRankingLoss(0.2),
    new nn.HingeEmbeddingLoss(), new nn.MultiLabelMarginLoss(), new nn.SoftMarginLoss({ reduction: 'none' }), new nn.MultiLabelSoftMarginLoss(null),
    new nn.MultiMarginLoss({ p: 2 }), new nn.TripletMarginLoss({ margin: 2, swap: true })];
  void losses;
  const bag = nn.EmbeddingBag.fromPretrained(kd.randn([5, 3]), { mode: 'max' });
  const b: kd.Tensor = bag(kd.tensor([0, 1, 4]), kd.tensor([0, 2]));
  const asm = new nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], { divValue: 2 });
  const [out, loss] = asm(kd.randn([2, 8]), kd.tensor([1, 7]));
  const lp: kd.Tensor = asm.logProb(kd.randn([2, 8]));
  void b; void out; void loss; void lp; void asm(kd.randn([2, 8]), kd.tensor([1, 7])).loss;
  const f: kd.Tensor[] = [F.hardshrink(x, 0.3), F.softshrink(x), F.tanhshrink(x), F.softsign(x), F.softmin(x, 1), F.threshold(x, 0, 1),
    F.celu(x, 1, true), F.glu(x, 1), F.prelu(x, kd.ones([4])), F.rrelu(x, 0.1, 0.3, true), F.gumbelSoftmax(x, { hard: true }), F.normalize(x, 2, 1),
    F.elu(x, 1, true), F.relu_(x), F.dropout1d(x, 0.5), F.alphaDropout(x, 0.2, true), F.klDiv(x, x, { reduction: 'batchmean' }), F.huberLoss(x, x),
    F.multiMarginLoss(x.select(2, 0), kd.tensor([1, 2]), { margin: 2 }), F.pairwiseDistance(x, x), F.cosineSimilarity(x, x, 2), F.pdist(x.select(2, 0)),
    F.pixelShuffle(kd.randn([1, 4, 2, 2]), 2), F.pixelUnshuffle(x, 1), F.channelShuffle(x, 2),
    F.embeddingBag(kd.tensor([0, 1]), kd.randn([3, 2]), kd.tensor([0]), { mode: 'sum' }), new nn.PixelShuffle(2)(kd.randn([1, 4, 2, 2])),
    new nn.CosineSimilarity(2)(x, x), new nn.PairwiseDistance({ keepdim: true })(x, x), new nn.ChannelShuffle(2)(x),
    F.upsample(x, null, 2, 'bilinear', true), F.upsample(x, { size: [3, 3], mode: 'area' }), F.upsampleNearest(x, [3, 3]), F.upsampleBilinear(x, { scaleFactor: 2 }),
    F.bilinear(x, x, kd.randn([2, 4, 4]), kd.randn([2])), F.bilinear(x, x, kd.randn([2, 4, 4]), { bias: null }),
    F.multiHeadAttentionForward(x, x, x, 4, 2, kd.randn([12, 4]), null, null, null, false, 0, kd.randn([4, 4]), null, { needWeights: false }).output,
    F.convTbc(x, kd.randn([2, 4, 3]), kd.randn([3]), 1)];
  void f;
}

// kd.multiprocessing (types/multiprocessing.d.ts)
{
  const shared = kd.ones([2]).shareMemory_();
  const isShared: boolean = shared.isShared();
  const reduced: kd.multiprocessing.ReducedTensor = kd.multiprocessing.reduceTensor(shared);
  const back: kd.Tensor = kd.multiprocessing.rebuildTensor(reduced);
  void isShared; void back;
  const lin: kd.nn.Linear = new kd.nn.Linear(2, 2).shareMemory();
  void lin;
}

// kd.distributions, broadcasting (types/distributions.d.ts)
{
  const m = new kd.distributions.Categorical(kd.tensor([0.3, 0.7]));
  const m2 = new kd.distributions.Categorical({ logits: kd.zeros([2, 3]) });
  const a: kd.Tensor = m.sample();
  const lp: kd.Tensor = m2.logProb(m2.sample([4]));
  const e: kd.Tensor = m.entropy();
  const shape: number[] = kd.broadcastShapes([2, 1], [3]);
  const [x, y] = kd.broadcastTensors(kd.ones([2, 1]), kd.ones([3]));
  const z: kd.Tensor = kd.ones([3]).broadcastTo([2, 3]);
  void a; void lp; void e; void shape; void x; void y; void z;
}

// kd.ao: int8 dynamic quantization
{
  const model = new kd.nn.Sequential(new kd.nn.Linear(4, 3), new kd.nn.ReLU());
  const q = kd.ao.quantization.quantizeDynamic(model, new Set([kd.nn.Linear]), 'qint8');
  const q2 = kd.ao.quantization.quantizeDynamic(model, { 0: kd.ao.quantization.perChannelDynamicQConfig }, { inplace: false });
  const lin = new kd.ao.nn.quantized.dynamic.Linear(4, 3);
  const w: kd.ao.QuantizedTensor = lin.weight();
  const s: number = w.qScale();
  const y: kd.Tensor = lin.forward(kd.randn([2, 4]));
  const kernel: 'avx512vnni' | 'avx512bw' | 'avx2' | 'scalar' = kd.build.int8Gemm;
  const lstm = new kd.ao.nn.quantized.dynamic.LSTM(4, 5, { numLayers: 2 });
  const [o, [hn, cn]] = lstm.forward(kd.randn([3, 2, 4]));
  void q; void q2; void s; void y; void kernel; void o; void hn; void cn;
}

// kd.fft helpers (types/fft.d.ts)
{
  const f: kd.Tensor = kd.fft.fftfreq(8, 0.5, { dtype: 'float64' });
  const r: kd.Tensor = kd.fft.rfftfreq(8, { device: 'cpu', requiresGrad: true });
  const s: kd.Tensor = kd.fft.fftshift(kd.zeros([4, 5]), [0, 1]);
  const i: kd.Tensor = kd.fft.ifftshift(s, -1);
  void f; void r; void i;
}
