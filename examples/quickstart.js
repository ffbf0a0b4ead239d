#!/usr/bin/env node
// quickstart.js - a tour of kindling: tensors (creation, broadcasting, views, reductions, matmul),
// a least-squares fit by plain gradient descent written with tensor ops, autograd, and the same
// fit with kd.nn.Linear + kd.optim.SGD, with a progress bar (kd.train). Runs in about a second.
// Build first (`npm install`), then run:  node examples/quickstart.js
'use strict';

const kd = require('..');

kd.manualSeed(0); // same random numbers on every run (and on CPU and CUDA)

// Everything in this tour runs inside kd.tidy(): the tensors it creates are disposed when the
// function returns (see 'memory' below).
kd.tidy(() => {
  // ---- creation -------------------------------------------------------------------------------
  // Like torch.tensor: integer-valued numbers give int64, any fraction gives float32;
  // `dtype` says what you want.
  const a = kd.tensor([[1, 2, 3], [4, 5, 6]], { dtype: 'float32' });
  console.log('a =', a); // printed the way PyTorch prints: tensor([[1., 2., 3.], ...])
  console.log('shape', a.shape, 'dtype', a.dtype, 'device', a.device, 'numel', a.numel());
  console.log('int64 by inference:', kd.tensor([1, 2, 3]));
  console.log('arange:', kd.arange(6), ' linspace:', kd.linspace(0, 1, 5));
  console.log('randn(2, 3):', kd.randn(2, 3));

  // ---- broadcasting ---------------------------------------------------------------------------
  const row = kd.tensor([10, 20, 30]); // shape [3], broadcast over the rows of a
  const col = kd.tensor([[1], [-1]]); //  shape [2, 1], broadcast over the columns
  console.log('a + row =', a.add(row));
  console.log('a * col =', a.mul(col));
  console.log('a / 4 - 1 =', a.div(4).sub(1));

  // ---- views: no copies, shared storage -------------------------------------------------------
  const at = a.t();
  console.log('a.t() =', at, 'contiguous?', at.isContiguous(), 'strides', at.stride());
  console.log('a.view(3, 2) =', a.view(3, 2));
  console.log('row 1 of a:', a.select(0, 1), ' first two columns:', a.narrow(1, 0, 2));
  const v = a.view(6);
  v.mul_(10); // in-place on the view changes a too
  console.log('after v.mul_(10), a =', a);
  v.div_(10);

  // ---- reductions -----------------------------------------------------------------------------
  console.log('sum:', a.sum().item(), ' row sums:', a.sum(1), ' column means:', a.mean({ dim: 0, keepdim: true }));
  const [values, indices] = a.max(1); // a tuple that also has names: a.max(1).indices
  console.log('max over dim 1:', values, indices);

  // ---- matmul ---------------------------------------------------------------------------------
  console.log('a @ a.T =', a.matmul(at));
});

// ---- least squares by gradient descent ----------------------------------------------------------
// Fit w in y = X w + noise by minimising mean((X w - y)^2); gradient = 2/n X^T (X w - y).
const n = 200;
const X = kd.randn(n, 3);
const wTrue = kd.tensor([[2], [-3], [0.5]]);
const y = kd.tidy(() => X.matmul(wTrue).add(kd.randn(n, 1).mul(0.01))); // tidy returns y, disposes the rest
const w = kd.zeros(3, 1);
const lr = 0.1;
for (let step = 0; step <= 100; step++) {
  // tidy disposes every temporary made inside (the step's residual, gradient, ...) at once.
  kd.tidy(() => {
    const residual = X.matmul(w).sub(y);
    const grad = X.t().matmul(residual).mul(2 / n);
    w.sub_(grad, { alpha: lr });
    if (step % 25 === 0) console.log(`step ${String(step).padStart(3)}  loss ${residual.pow(2).mean().item().toExponential(3)}`);
  });
}
const err = kd.tidy(() => {
  console.log('fitted w =', w.t(), ' true w =', wTrue.t());
  return w.sub(wTrue).abs().max().item();
});
console.log(`max |w - w_true| = ${err.toExponential(2)}`);

// ---- autograd -----------------------------------------------------------------------------------
// Tensors that require grad record the ops applied to them; backward() fills in .grad.
kd.tidy(() => {
  const x = kd.tensor([1, 2, 3], { dtype: 'float32' }).requiresGrad_();
  const z = x.pow(2).sum().add(x.mul(3).sum()); // z = sum(x^2 + 3x)
  z.backward();
  console.log('z =', z.item(), ' dz/dx = 2x + 3 =', x.grad); // tensor([5., 7., 9.])
  const w = kd.noGrad(() => x.mul(2)); // nothing recorded inside kd.noGrad
  console.log('under noGrad requiresGrad =', w.requiresGrad);
});

// ---- a tiny fit with kd.nn and kd.optim --------------------------------------------------------
// The same regression as above, as PyTorch code reads: a Linear layer, MSELoss, SGD with momentum.
const model = kd.tidy(() => new kd.nn.Linear(3, 1)); // tidy: parameters survive, init temporaries go
const optimizer = new kd.optim.SGD(model.parameters(), { lr: 0.05, momentum: 0.9 });
const lossFn = new kd.nn.MSELoss();
const steps = 200;
const bar = new kd.train.ProgressBar({ total: steps, label: 'fit', unit: 'step' }); // on stderr
const losses = [];
for (let step = 1; step <= steps; step++) {
  const loss = kd.tidy(() => {
    optimizer.zeroGrad();
    const l = lossFn(model(X), y); // model(x) calls forward (and the module's hooks)
    l.backward();
    optimizer.step();
    return l.item();
  });
  if (step % 20 === 0) losses.push({ step, loss });
  bar.tick({ loss });
}
bar.finish();
console.log(kd.train.table(losses));
const fitErr = kd.tidy(() => {
  console.log('Linear weight =', model.weight, ' bias =', model.bias.item().toExponential(2));
  return model.weight.t().sub(wTrue).abs().max().item();
});
console.log(`max |weight - w_true| = ${fitErr.toExponential(2)}`);

// ---- memory --------------------------------------------------------------------------------------
// Native memory is freed deterministically: dispose(), kd.tidy(), or `using` (Node 24+, TS).
kd.dispose([X, wTrue, y, w, model.parameters(), [...optimizer.state.values()]]);
console.log('live tensors after cleanup:', kd.memory().liveTensors);
console.log('CUDA available:', kd.cuda.isAvailable());
if (err > 1e-2 || fitErr > 1e-2) process.exitCode = 1;
