#!/usr/bin/env node
// vision_ort.js - ResNet-18 and MobileNetV2 inference (3x224x224 images, float32, eval mode):
// kindling (examples/vision/models) against PyTorch 1.13 (bench/peers/torch_peer.py's vision.*
// cases) and onnxruntime-node (CPU execution provider) in one run, paired samples as in
// bench/run.js (Note [Paired samples] in bench/lib/timing.js), all three with the same thread
// count. onnxruntime-node is installed on first use into bench/.cache/onnxruntime (never a
// dependency of kindling; its install script is told to fetch nothing); the models are
// exported from torchvision with torch.onnx.export (opset 13, dynamic batch) into
// bench/.cache/onnx. A side that cannot run is skipped with the reason.
//   node bench/vision_ort.js [--quick] [--threads N] [--batch 1,32]     (npm run bench:vision)
// Prints a table, the machine load before and after, and writes bench/out/vision-ort-<date>.json.
'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const argv = process.argv.slice(2);
const flag = (name, dflt) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : dflt);
const quick = argv.includes('--quick');
const threads = Number(flag('--threads', os.cpus().length));
const batches = flag('--batch', quick ? '1' : '1,32').split(',').map(Number);
process.env.KINDLING_NUM_THREADS = process.env.OPENBLAS_NUM_THREADS = process.env.OMP_NUM_THREADS = String(threads);

const kd = require('..');
const vision = require('../examples/vision/models')(kd);
const { prepare, sample, prepareAsync, sampleAsync, summary } = require('./lib/timing');
const { startTorch } = require('./lib/torch');
const { ensurePackage, cacheRoot } = require('./lib/npm_cache');
const { readLoad, loadSpan, formatLoad } = require('./lib/load');
const { fmtTime } = require('./lib/format');

if (typeof kd.setNumThreads === 'function') kd.setNumThreads(threads);
const timing = quick ? { warmupS: 0.03, minSampleS: 0.02, repeats: 5, settleS: 0.002 }
  : { warmupS: 0.1, minSampleS: 0.05, repeats: 7, settleS: 0.01 };
const MODELS = [['vision.resnet18', 'resnet18'], ['vision.mobilenet_v2', 'mobilenet_v2']];
const log = (s) => process.stdout.write(s);

/** torch.onnx.export of torchvision's model, cached: the path, or {error}. */
function exportOnnx(arch) {
  const dir = path.join(cacheRoot, 'onnx');
  const file = path.join(dir, `${arch}.onnx`);
  if (fs.existsSync(file)) return file;
  fs.mkdirSync(dir, { recursive: true });
  const py = process.env.KINDLING_BENCH_PYTHON || '/usr/bin/python3';
  const code = `import sys, torch, torchvision
m = getattr(torchvision.models, sys.argv[1])().eval()
torch.onnx.export(m, torch.randn(1, 3, 224, 224), sys.argv[2] + '.tmp', input_names=['input'], output_names=['logits'],
                  dynamic_axes={'input': {0: 'n'}, 'logits': {0: 'n'}}, opset_version=13)`;
  const r = spawnSync(py, ['-c', code, arch, file], { encoding: 'utf8', timeout: 300e3 });
  if (r.status !== 0) return { error: `torch.onnx.export ${arch}: ${String(r.stderr || r.error).trim().split('\n').pop()}` };
  fs.renameSync(`${file}.tmp`, file);
  return file;
}

async function main() {
  const load0 = readLoad();
  console.log(`vision inference: kindling vs PyTorch vs onnxruntime-node, ${threads} threads, batches ${batches.join(', ')}`);
  const torch = await startTorch({ threads });
  if (torch.error) console.log(`  skip PyTorch: ${torch.error}`);
  let ort = null;
  const o = ensurePackage('onnxruntime-node', 'onnxruntime', log, { ONNXRUNTIME_NODE_INSTALL: 'skip', ONNXRUNTIME_NODE_INSTALL_CUDA: 'skip' });
  if (o.error) console.log(`  skip onnxruntime-node: ${o.error}`);
  else {
    try {
      ort = require(path.join(o.dir, 'node_modules', 'onnxruntime-node'));
      console.log(`  onnxruntime-node ${o.version}`);
    } catch (e) { console.log(`  skip onnxruntime-node: ${e.message.split('\n')[0]}`); }
  }
  const rows = [];
  for (const [name, arch] of MODELS) {
    const onnx = ort ? exportOnnx(arch) : null;
    if (onnx && onnx.error) console.log(`  skip onnxruntime-node for ${arch}: ${onnx.error}`);
    const session = ort && typeof onnx === 'string'
      ? await ort.InferenceSession.create(onnx, { intraOpNumThreads: threads, interOpNumThreads: 1, graphOptimizationLevel: 'all' })
      : null;
    for (const n of batches) {
      kd.manualSeed(0);
      const model = vision.getModel(arch).eval();
      const x = kd.randn([n, 3, 224, 224]);
      const kFn = () => { kd.inferenceMode(() => model(x)).dispose(); };
      const feeds = session ? { input: new ort.Tensor('float32', x.dataSync(), x.shape) } : null;
      const oFn = session ? () => session.run(feeds) : null;
      const kBatch = prepare(kFn, timing);
      const oBatch = oFn ? await prepareAsync(oFn, timing) : 0;
      let tOpen = null;
      if (!torch.error) {
        tOpen = await torch.peer.request({ op: 'open', name, size: n, warmup_s: timing.warmupS, min_sample_s: timing.minSampleS });
        if (tOpen.error) console.log(`  PyTorch ${name}: ${tOpen.error}`);
      }
      const kS = []; const tS = []; const oS = [];
      const turns = [() => kS.push(sample(kFn, kBatch, timing.settleS))];
      if (tOpen && !tOpen.error) turns.push(async () => tS.push((await torch.peer.request({ op: 'sample', settle_s: timing.settleS })).sample_s));
      if (oFn) turns.push(async () => oS.push(await sampleAsync(oFn, oBatch, timing.settleS)));
      for (let r = 0; r < timing.repeats; r++) for (let i = 0; i < turns.length; i++) await turns[(i + r) % turns.length]();
      if (tOpen && !tOpen.error) await torch.peer.request({ op: 'close' });
      const row = { case: name, batch: n, kindling_s: summary(kBatch, kS).medianS,
        torch_s: tS.length ? summary(tOpen.batch, tS).medianS : null, ort_s: oS.length ? summary(oBatch, oS).medianS : null };
      rows.push(row);
      const ratio = (v) => (v ? `${(row.kindling_s / v).toFixed(2)}x` : '-');
      console.log(`  ${name} batch ${n}: kindling ${fmtTime(row.kindling_s)}, PyTorch ${row.torch_s ? fmtTime(row.torch_s) : '-'} ` +
        `(kd/torch ${ratio(row.torch_s)}), onnxruntime ${row.ort_s ? fmtTime(row.ort_s) : '-'} (kd/ort ${ratio(row.ort_s)})`);
      x.dispose();
      kd.dispose([model.parameters(), model.buffers()]);
    }
    if (session) await session.release();
  }
  if (!torch.error) torch.peer.close();
  const span = loadSpan(threads, load0, readLoad());
  console.log(formatLoad(span, threads));
  const out = path.join(__dirname, 'out', `vision-ort-${new Date().toISOString().replace(/[:.]/g, '-').slice(0, 19)}Z.json`);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, JSON.stringify({ threads, timing, load: span, onnxruntime: o.version || null, rows }, null, 1) + '\n');
  console.log(`results: ${path.relative(process.cwd(), out)}`);
}

main().catch((e) => { console.error(`vision_ort: ${e.stack || e.message}`); process.exitCode = 1; });
