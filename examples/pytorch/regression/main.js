#!/usr/bin/env node
// main.js - pytorch/examples' regression/main.py, ported line by line to kindling: fits a
// degree-4 polynomial with one Linear layer and hand-written SGD (param.data.add_) under the
// smooth L1 loss, until the loss is below 1e-3.
//
//   node examples/pytorch/regression/main.js
'use strict';

const kd = require('../../..');
const F = kd.nn.functional;

const POLY_DEGREE = 4;
let W_target = kd.randn(POLY_DEGREE, 1).mul(5);
let b_target = kd.randn(1).mul(5);

/** Builds features i.e. a matrix with columns [x, x^2, x^3, x^4]. */
function makeFeatures(x) {
  x = x.unsqueeze(1);
  return kd.cat(Array.from({ length: POLY_DEGREE }, (_, k) => x.pow(k + 1)), 1);
}

/** Approximated function. */
function f(x) {
  return x.mm(W_target).add(b_target.item());
}

/** Creates a string description of a polynomial. */
function polyDesc(W, b) {
  let result = 'y = ';
  W.tolist().forEach((w, i) => { result += `${w >= 0 ? '+' : ''}${w.toFixed(2)} x^${i + 1} `; });
  const b0 = b.tolist()[0];
  result += `${b0 >= 0 ? '+' : ''}${b0.toFixed(2)}`;
  return result;
}

/** Builds a batch i.e. (x, f(x)) pair. */
function getBatch(batchSize = 32) {
  const random = kd.randn(batchSize);
  const x = makeFeatures(random);
  const y = f(x);
  return [x, y];
}

/** One step of the loop: zero the gradients, forward, backward, apply; returns the loss. */
function step(fc, batchX, batchY) {
  // Reset gradients
  fc.zeroGrad();

  // Forward pass
  const output = F.smoothL1Loss(fc(batchX), batchY);
  const loss = output.item();

  // Backward pass
  output.backward();

  // Apply gradients
  for (const param of fc.parameters()) param.data.add_(param.grad.mul(-0.1));
  return loss;
}

function main() {
  // Define model
  const fc = new kd.nn.Linear(W_target.size(0), 1);

  let loss;
  let batchIdx;
  for (batchIdx = 1; ; batchIdx++) {
    // Get data
    const [batchX, batchY] = getBatch();

    loss = kd.tidy(() => step(fc, batchX, batchY));
    batchX.dispose();
    batchY.dispose();

    // Stop criterion
    if (loss < 1e-3) break;
  }

  console.log(`Loss: ${loss.toFixed(6)} after ${batchIdx} batches`);
  console.log(`==> Learned function:\t${polyDesc(fc.weight.view(-1), fc.bias)}`);
  console.log(`==> Actual function:\t${polyDesc(W_target.view(-1), b_target)}`);
}

/** The target polynomial (the parity test sets PyTorch's). */
function setTarget(W, b) { W_target = W; b_target = b; }

module.exports = { POLY_DEGREE, makeFeatures, f, polyDesc, getBatch, step, setTarget, main };

if (require.main === module) main();
