#!/usr/bin/env node
// train.js - time_sequence_prediction/train.py of pytorch/examples, line for line: two stacked
// LSTMCells and a linear layer (float64) learn the sine waves of traindata.safetensors (written by
// generate_sine_wave.js) with LBFGS, then predict 1000 samples past the end of three held-out
// waves after every step, drawn to predict<step>.svg (the original draws predict<step>.pdf with
// matplotlib).
//
//   node examples/pytorch/time_sequence_prediction/generate_sine_wave.js
//   node examples/pytorch/time_sequence_prediction/train.js            # 15 steps
//   node examples/pytorch/time_sequence_prediction/train.js --steps 1  # a quick check
'use strict';

const fs = require('node:fs');
const kd = require('../../..');
const { ArgumentParser } = require('../word_language_model/argparse');

const nn = kd.nn;
const optim = kd.optim;

class Sequence extends nn.Module {
  constructor() {
    super();
    this.lstm1 = new nn.LSTMCell(1, 51);
    this.lstm2 = new nn.LSTMCell(51, 51);
    this.linear = new nn.Linear(51, 1);
  }

  forward(input, future = 0) {
    const outputs = [];
    let hT = kd.zeros(input.size(0), 51, { dtype: 'float64' });
    let cT = kd.zeros(input.size(0), 51, { dtype: 'float64' });
    let hT2 = kd.zeros(input.size(0), 51, { dtype: 'float64' });
    let cT2 = kd.zeros(input.size(0), 51, { dtype: 'float64' });

    let output;
    for (const inputT of input.split(1, { dim: 1 })) {
      [hT, cT] = this.lstm1(inputT, [hT, cT]);
      [hT2, cT2] = this.lstm2(hT, [hT2, cT2]);
      output = this.linear(hT2);
      outputs.push(output);
    }
    for (let i = 0; i < future; i++) { // if we should predict the future
      [hT, cT] = this.lstm1(output, [hT, cT]);
      [hT2, cT2] = this.lstm2(hT, [hT2, cT2]);
      output = this.linear(hT2);
      outputs.push(output);
    }
    return kd.cat(outputs, { dim: 1 });
  }
}

// plt.figure(figsize=(30,10)) ... plt.savefig: the same drawing as a small SVG document.
function savePlot(file, y, inputLen, future) {
  const W = 1500; const H = 500; const P = 60;
  const sx = (x) => (P + (x / (inputLen + future)) * (W - 2 * P)).toFixed(1);
  const sy = (v) => (H / 2 - v * (H / 2 - P)).toFixed(1);
  const line = (yi, from, to, color, dash) => `<polyline fill="none" stroke="${color}" stroke-width="2"${dash ? ' stroke-dasharray="2 4"' : ''} points="${
    Array.from({ length: to - from }, (_, k) => `${sx(from + k)},${sy(yi[from + k])}`).join(' ')}"/>`;
  const draw = (yi, color) => [line(yi, 0, inputLen, color, false), line(yi, inputLen, inputLen + future, color, true)].join('\n');
  fs.writeFileSync(file, `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif">
<rect width="100%" height="100%" fill="white"/>
<text x="${W / 2}" y="28" text-anchor="middle" font-size="22">Predict future values for time sequences (dashlines are predicted values)</text>
<text x="${W / 2}" y="${H - 12}" text-anchor="middle" font-size="18">x</text>
<text x="18" y="${H / 2}" font-size="18">y</text>
<line x1="${P}" x2="${W - P}" y1="${sy(0)}" y2="${sy(0)}" stroke="#ccc"/>
${draw(y[0], 'red')}
${draw(y[1], 'green')}
${draw(y[2], 'blue')}
</svg>
`);
}

function main() {
  const parser = new ArgumentParser();
  parser.addArgument('--steps', { type: 'int', default: 15, help: 'steps to run' });
  const opt = parser.parseArgs();
  // set random seed to 0
  kd.manualSeed(0);
  // load data and make training set
  const data = kd.loadSync('traindata.safetensors').data;
  const input = data.index([kd.slice(3), kd.slice(null, -1)]);
  const target = data.index([kd.slice(3), kd.slice(1)]);
  const testInput = data.index([kd.slice(null, 3), kd.slice(null, -1)]);
  const testTarget = data.index([kd.slice(null, 3), kd.slice(1)]);
  // build the model
  const seq = new Sequence();
  seq.double();
  const criterion = new nn.MSELoss();
  // use LBFGS as optimizer since we can load the whole data to train
  const optimizer = new optim.LBFGS(seq.parameters(), { lr: 0.8 });
  // begin to train
  for (let i = 0; i < opt.steps; i++) {
    console.log('STEP: ', i);
    const closure = () => kd.tidy(() => {
      optimizer.zeroGrad();
      const out = seq(input);
      const loss = criterion(out, target);
      console.log('loss:', loss.item());
      loss.backward();
      return loss;
    });
    kd.tidy(() => { optimizer.step(closure); });
    // begin to predict, no need to track gradient here
    const future = 1000;
    const y = kd.noGrad(() => kd.tidy(() => {
      const pred = seq(testInput, future);
      const loss = criterion(pred.index([kd.slice(), kd.slice(null, -future)]), testTarget);
      console.log('test loss:', loss.item());
      return pred.detach().arraySync();
    }));
    // draw the result
    savePlot(`predict${i}.svg`, y, input.size(1), future);
  }
}

if (require.main === module) main();

module.exports = { Sequence, main };
