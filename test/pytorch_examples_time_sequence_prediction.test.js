// pytorch_examples_time_sequence_prediction.test.js - examples/pytorch/time_sequence_prediction
// against pytorch/examples' own generate_sine_wave.py and train.py in PyTorch 1.13 (fixtures
// written by tools/fixtures/pytorch_examples/time_sequence_prediction.py): generate_sine_wave.js
// draws numpy's offsets and writes the same waves; train.js, from PyTorch's initial weights on a
// small batch of them (3 training and 3 test waves of 81 samples), prints what train.py printed -
// every loss LBFGS's closure computed (the same number of calls, line search included) and each
// step's test loss of the 1000-sample prediction; and the command line runs end to end.
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFile } = require('node:child_process');
const kd = require('..');

const EXAMPLE = path.join(__dirname, '..', 'examples', 'pytorch', 'time_sequence_prediction');
const FIXTURES = path.join(__dirname, 'fixtures', 'pytorch_examples', 'time_sequence_prediction');
const expected = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'expected.json'), 'utf8'));

// Note [Tolerance of the LBFGS run]
// Everything is float64. One closure call's loss agrees to ~1e-15 relative (different summation
// orders in the GEMMs and the mean); LBFGS turns each loss and gradient into its next step
// (directions from dot products of the gradient history, a step length), so the differences grow
// with every iteration: over the 40 calls of 2 steps the largest relative difference seen is
// ~1e-11. 1e-8 leaves room for other CPUs' summation orders; a wrong step (another lr, history,
// or a forward that drops a state) changes the losses from the second call on by 1e-3 and more.
const RTOL = 1e-8;

const node = (args, cwd) => new Promise((resolve, reject) => {
  execFile(process.execPath, args, { cwd, timeout: 120000 }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)));
});

describe('pytorch/examples time_sequence_prediction', function () {
  this.timeout(120000);
  let tmp;
  let small;
  before(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-tsp-'));
    small = path.join(tmp, 'small');
    fs.mkdirSync(small);
  });
  after(() => { fs.rmSync(tmp, { recursive: true, force: true }); });

  it('random_state.js draws numpy\'s RandomState(2).randint(-80, 80, 100)', function () {
    const { RandomState } = require(path.join(EXAMPLE, 'random_state.js'));
    assert.deepEqual(new RandomState(2).randint(-80, 80, 100), expected.sine.offsets);
    // MT19937's reference output for init_genrand(5489)
    assert.equal(new RandomState(5489).nextUint32(), 3499211612);
  });

  it('generate_sine_wave.js writes generate_sine_wave.py\'s waves', async function () {
    await node([path.join(EXAMPLE, 'generate_sine_wave.js')], tmp);
    const { data } = kd.loadSync(path.join(tmp, 'traindata.safetensors'));
    assert.equal(data.dtype, 'float64');
    assert.deepEqual(data.shape, [100, 1000]);
    const first = data.narrow(1, 0, 5).arraySync();
    const sums = data.sum(1).arraySync();
    for (let n = 0; n < 100; n++) {
      first[n].forEach((v, j) => assert.ok(Math.abs(v - expected.sine.first[n][j]) <= 1e-15, `data[${n}][${j}]`));
      assert.ok(Math.abs(sums[n] - expected.sine.sums[n]) <= 1e-11, `sum of wave ${n}: ${sums[n]} vs ${expected.sine.sums[n]}`);
    }
    kd.saveSync({ data: data.narrow(0, 0, expected.rows).narrow(1, 0, expected.length).contiguous() }, path.join(small, 'traindata.safetensors'));
  });

  it(`train.js --steps ${expected.steps} prints train.py's losses, closure call for closure call`, function () {
    assert.ok(fs.existsSync(path.join(small, 'traindata.safetensors')), 'made by the test above');
    const { main } = require(path.join(EXAMPLE, 'train.js'));
    const initial = kd.loadSync(path.join(FIXTURES, 'initial.safetensors'));
    let loaded = false;
    const hook = kd.nn.modules.module.registerModuleForwardPreHook((m) => {
      if (!loaded && m.constructor.name === 'Sequence') {
        m.loadStateDict(initial);
        loaded = true;
      }
    });
    const printed = [];
    const cwd = process.cwd();
    const { argv } = process;
    const log = console.log;
    try {
      process.chdir(small);
      process.argv = [argv[0], 'train.js', '--steps', String(expected.steps)];
      console.log = (...a) => printed.push(a.join(' '));
      main();
    } finally {
      console.log = log;
      process.argv = argv;
      process.chdir(cwd);
      hook.remove();
    }
    assert.ok(loaded);
    const shape = (lines) => lines.map((l) => l.replace(/[-\d.e]+$/, '#'));
    assert.deepEqual(shape(printed), shape(expected.printed), 'the same steps and number of closure calls');
    let worst = 0;
    printed.forEach((line, i) => {
      if (line.startsWith('STEP')) return assert.equal(line, expected.printed[i]);
      const a = Number(line.split(' ').pop());
      const e = Number(expected.printed[i].split(' ').pop());
      const rel = Math.abs(a - e) / Math.abs(e);
      worst = Math.max(worst, rel);
      assert.ok(rel <= RTOL, `line ${i}: ${line} vs ${expected.printed[i]} (relative ${rel.toExponential(2)})`);
    });
    if (process.env.KD_TEST_VERBOSE) process.stderr.write(`      largest relative difference ${worst.toExponential(2)}\n`);
    for (let s = 0; s < expected.steps; s++) assert.match(fs.readFileSync(path.join(small, `predict${s}.svg`), 'utf8'), /^<svg [^]*<polyline[^]*<\/svg>\n$/);
  });

  it('train.js --steps 1 runs from the command line', async function () {
    const out = await node([path.join(EXAMPLE, 'train.js'), '--steps', '1'], small);
    assert.match(out, /^STEP: {2}0\n(loss: [\d.e-]+\n)+test loss: [\d.e-]+\n$/);
    await assert.rejects(node([path.join(EXAMPLE, 'train.js'), '--steps', 'x'], small), /argument --steps: invalid int value: 'x'/);
  });
});
