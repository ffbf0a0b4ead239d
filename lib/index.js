// index.js - kindling's entry point (CommonJS; lib/index.mjs re-exports it for ESM).
// Loads the native addon, registers the error factory, installs the generated ops on kd and
// on Tensor.prototype, and exports the public API.
'use strict';

const errors = require('./errors');
const { Tensor, DTYPES, bind: bindTensor, setGeneratedTo, describe } = require('./tensor');
const dtypes = require('./dtypes');
const tidyMod = require('./tidy');
const makeRuntime = require('./args');
const makeCreation = require('./creation');

// The native addon (lib/binary.js chooses the build or the prebuilt binary). When it is missing
// (no prebuilt binary fits and the install step did not build it, e.g. scripts were ignored) or
// cannot be loaded (built for another Node.js, a library it links is gone), the error says how to
// get a working one: rebuild it.
const binary = require('./binary').chooseBinary();
function loadBinding() {
  const file = binary.file;
  require('./blas_core').chooseBlasCore(); // before OpenBLAS initialises (lib/blas_core.js)
  try {
    return require(file);
  } catch (e) {
    const missing = e && e.code === 'MODULE_NOT_FOUND' && String(e.message).includes(file);
    if (!missing && !(e && e.code === 'ERR_DLOPEN_FAILED')) throw e;
    const what = missing ? `kindling's native addon is not built (no ${file}${binary.why ? `; ${binary.why}` : ''})`
      : `kindling's native addon could not be loaded (${String(e.message).split('\n')[0]})`;
    const err = new errors.KindlingError(
      `${what}: run \`npm rebuild kindling\` (it needs python3, make and a C compiler)`, 'KD_NOT_BUILT');
    err.cause = e;
    throw err;
  }
}

const N = loadBinding();
for (const dir of require('./binary').cudaLibraryDirs(binary)) N.cuda.addLibraryDir(dir);
N.setErrorFactory(errors.makeError);
dtypes.bind(N);
bindTensor(N);
tidyMod.bind(Tensor);

const kd = module.exports;

// Generated ops: kd.<op> and Tensor.prototype.<op>. Tensor#to is ours (it accepts strings and
// tensors) and calls the generated one.
const ourTo = Tensor.prototype.to;
const rt = makeRuntime(Tensor, dtypes.acceptedDtypes, describe);
require('./ops.gen.js')(Tensor, kd, N.ops, rt);
// a number given as `self` (kd.pow(2, t)): Note [Numbers as self] in lib/args.js
rt.numberTensor = (value, dtype, device) => kd.full([], value, { dtype, device });
setGeneratedTo(Tensor.prototype.to);
Tensor.prototype.to = ourTo;
// random_ under a name that does not read as Math.random: the same function (src/ops/oplist/random.js).
Tensor.prototype.randomInt_ = Tensor.prototype.random_;
// t.polygamma(n): PyTorch's schema is polygamma(int n, Tensor self), so the generated method
// (which takes self first) does not fit; the method calls the function.
Tensor.prototype.polygamma = function polygamma(n) { return kd.polygamma(n, this); };
// t.fill_(value) with value a 0-d Tensor (PyTorch's fill_.Tensor, as in `input.fill_(wordIdx)`):
// a broadcasting copy_ of it, which casts, crosses devices and takes value's gradient (its sum).
const fillScalar_ = Tensor.prototype.fill_;
Tensor.prototype.fill_ = function fill_(value, ...rest) {
  if (!(value instanceof Tensor)) return fillScalar_.call(this, value, ...rest);
  if (rest.length !== 0) throw errors.typeError(`Tensor.fill_(): takes 1 positional argument but ${rest.length + 1} were given`);
  if (value.ndim !== 0) {
    throw new errors.KindlingError(`fill_ only supports 0-dimension value tensor but got tensor with ${value.ndim} dimensions.`, 'KD_INVALID_ARGUMENT');
  }
  return this.copy_(value);
};
// kd.randint(high, size, {dtype, device}): PyTorch's first overload, low = 0 (the op list's
// randint is PyTorch's randint.low: (low, high, size)).
const randintLow = kd.randint;
kd.randint = function randint(...args) {
  const size = args[1];
  if (typeof args[0] === 'number' && (Array.isArray(size) || (ArrayBuffer.isView(size) && !(size instanceof DataView)))) {
    return randintLow(0, ...args);
  }
  return randintLow(...args);
};

const creation = makeCreation(N);

kd.Tensor = Tensor;
kd.tensor = creation.tensor;
/** True for kindling tensors. */
kd.isTensor = (x) => x instanceof Tensor;
/** The dtype names, float32 (the default) first (PyTorch's aliases, 'float', 'long', ..., are
 * accepted wherever a dtype is, see lib/dtypes.js). */
kd.dtypes = Object.freeze(DTYPES.slice());

kd.tidy = tidyMod.tidy;
kd.keep = tidyMod.keep;
kd.dispose = tidyMod.dispose;

kd.manualSeed = creation.manualSeed;
kd.initialSeed = creation.initialSeed;
kd.memory = creation.memory;
kd.emptyCache = creation.emptyCache;
kd.setNumThreads = creation.setNumThreads;
kd.getNumThreads = creation.getNumThreads;

kd.KindlingError = errors.KindlingError;
kd.KindlingTypeError = errors.KindlingTypeError;
kd.KindlingRangeError = errors.KindlingRangeError;

/** Facts about this build: CPU matmul uses a BLAS (blasLibrary: OpenBLAS's own description, and
 * how it is linked); the CUDA backend library was found (next to the addon, at
 * $KINDLING_CUDA_LIBRARY, or in the optional package kindling-cuda-linux-x64; with
 * KINDLING_CUDA=emulate, the emulated GPU's library). kd.cuda.isAvailable() says if it can run.
 * cpuCapability: the instruction-set level the hot CPU kernels run at ('default', 'avx2' or
 * 'avx512'; the best this CPU supports, or KINDLING_CPU_CAPABILITY), as
 * torch.backends.cpu.get_cpu_capability(). bf16Gemm: the kernel of bfloat16 matrix products
 * ('amx' on AMX tiles, 'avx512bf16' on VDPBF16PS, 'none': widened to float32; KINDLING_AMX=0
 * turns AMX off). int8Gemm: the kernel of the int8 dynamic quantized Linear ('avx512vnni',
 * 'avx512bw', 'avx2' or 'scalar'; KINDLING_VNNI=0 turns VNNI off). binary: 'prebuilt' (shipped in the package) or
 * 'build' (compiled from source on this machine); binaryPath: the addon's file. */
const blasLink = binary.manifest && binary.manifest.blasLink === 'static' ? 'linked into the addon' : 'the system libopenblas';
kd.build = Object.freeze({
  blas: !!N.hasBlas,
  blasLibrary: N.blasConfig ? `${N.blasConfig} (${blasLink})` : null,
  cuda: N.cuda.libraryFound(),
  cpuCapability: N.cpuCapability,
  bf16Gemm: N.bf16Gemm,
  int8Gemm: N.int8Gemm,
  binary: binary.source,
  binaryPath: binary.file,
});
if (N.cpuCapabilityWarning) process.emitWarning(N.cpuCapabilityWarning, { code: 'KD_CPU_CAPABILITY' });
kd.version = require('../package.json').version;

kd.cuda = require('./cuda')(N);
// Tensor conveniences (tolist, newZeros, float(), type(), ...) and the legacy constructors
// (kd.FloatTensor, kd.cuda.LongTensor, kd.Tensor(2, 3) called as a function).
kd.Tensor = require('./tensor_conveniences')(kd, Tensor, describe);
kd.backends = require('./backends')(N);
require('./autograd')(kd, Tensor, N, rt);
// kd.autocast / isAutocastEnabled / getAutocastDtype and kd.amp (GradScaler): mixed precision.
require('./amp')(kd, Tensor, N, rt);
// kd.library (define / impl / registerAutograd / registerAutocast) and kd.ops.<namespace>: ops
// defined at run time, dispatched like the generated ones.
const library = require('./library')(kd, Tensor, N);
// kd.utils.cppExtension.load: C extensions (include/kindling.h) compiled and loaded at run time.
kd.utils = { cppExtension: require('./cpp_extension')(N, library.adopt) };

// PyTorch-style indexing (Tensor#index/indexPut_ keys, kd.slice), nonzero asTuple, unique results.
require('./indexing')(kd, Tensor);
// uniqueConsecutive's single-tensor result.
require('./search')(kd, Tensor);

// kd.tensordot(a, b, dims): PyTorch's dims (an int or a pair of dim lists) over the native op.
require('./shape_construct')(kd);

// kd.nn.functional.maxPool2d(..., returnIndices) picks values or (values, indices).
require('./nn_pool')(kd);

// kd.nn modules, layers, losses, init and utils (lib/nn/), next to kd.nn.functional.
require('./nn')(kd);
// kd.ao: int8 dynamic quantization (quantizeDynamic, kd.ao.nn.quantized.dynamic.Linear; lib/ao/).
require('./ao')(kd);

// kd.profiler: torch.profiler's profile (table, key averages, Chrome trace) and recordFunction.
kd.profiler = require('./profiler')(N);

// kd.data (datasets, DataLoader) and safetensors serialization (kd.save/load, checkpoints).
kd.data = require('./data')(kd, Tensor, N);
kd.utils.data = kd.data; // torch.utils.data's path
require('./serialization')(kd, Tensor, N);

// kd.broadcastShapes / broadcastTo / broadcastTensors (lib/broadcast.js).
require('./broadcast')(kd, Tensor);

// kd.fft: fftfreq, rfftfreq, fftshift, ifftshift (lib/fft.js).
kd.fft = require('./fft')(kd);

// kd.distributions: Distribution and Categorical (lib/distributions.js).
kd.distributions = require('./distributions')(kd);

// kd.multiprocessing: tensors shared between worker threads (lib/multiprocessing.js).
require('./multiprocessing')(kd, Tensor, N);
// kd.distributed: rendezvous stores (lib/distributed/).
require('./distributed')(kd);

// kd.optim: optimizers (fused native updates) and kd.optim.lrScheduler.
kd.optim = require('./optim')(kd);

// kd.train: progress bar and SVG training curves for the examples (lib/train/).
kd.train = require('./train');
