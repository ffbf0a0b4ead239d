// index.mjs - ESM entry: `import * as kd from 'kindling'`, `import kd from 'kindling'` or
// named imports (`import { tensor, tidy } from 'kindling'`). The module itself is CommonJS
// (lib/index.js); op functions are listed in the generated lib/ops.gen.mjs.
import kd from './index.js';

export * from './ops.gen.mjs';
export default kd;

export const {
  Tensor,
  tensor,
  isTensor,
  dtypes,
  tidy,
  keep,
  dispose,
  manualSeed,
  initialSeed,
  memory,
  emptyCache,
  setNumThreads,
  getNumThreads,
  KindlingError,
  KindlingTypeError,
  KindlingRangeError,
  build,
  version,
  cuda,
  slice,
  Slice,
  nn,
  data,
  save,
  saveSync,
  load,
  loadSync,
  saveCheckpoint,
  saveCheckpointSync,
  loadCheckpoint,
  loadCheckpointSync,
  safetensors,
  optim,
  train,
  autocast,
  isAutocastEnabled,
  getAutocastDtype,
  amp,
} = kd;
