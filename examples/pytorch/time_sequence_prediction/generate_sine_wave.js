#!/usr/bin/env node
// generate_sine_wave.js - time_sequence_prediction/generate_sine_wave.py of pytorch/examples,
// line for line: N = 100 sine waves of L = 1000 samples (period 2 * pi * T, T = 20), each shifted
// by a random offset in [-4T, 4T) drawn by numpy's RandomState(2) (./random_state.js gives the same
// numbers), saved as float64 to traindata.safetensors (the original's torch.save to traindata.pt).
'use strict';

const kd = require('../../..');
const { RandomState } = require('./random_state');

const np = { random: new RandomState(2) };

const T = 20;
const L = 1000;
const N = 100;

const offsets = np.random.randint(-4 * T, 4 * T, N);
const data = new Float64Array(N * L);
for (let n = 0; n < N; n++) {
  for (let l = 0; l < L; l++) {
    const x = l + offsets[n];
    data[n * L + l] = Math.sin(x / 1.0 / T);
  }
}
kd.saveSync({ data: kd.tensor(data).view(N, L) }, 'traindata.safetensors');
