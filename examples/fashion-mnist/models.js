// models.js - the two Fashion-MNIST models of the example (also timed by bench/cases.js):
//   mlp: Flatten -> Linear(784, 256) -> ReLU -> Linear(256, 10)
//   cnn: [Conv2d(1, 32, 3, padding 1) -> ReLU -> MaxPool2d(2)] -> [Conv2d(32, 64, 3, padding 1)
//        -> ReLU -> MaxPool2d(2)] -> Flatten -> Linear(64 * 7 * 7, 10)
// Both start from PyTorch's default initialisation (kd.manualSeed makes them reproducible).
'use strict';

module.exports = function makeModels(kd) {
  const { nn } = kd;
  return {
    mlp: () => new nn.Sequential(
      new nn.Flatten(),
      new nn.Linear(784, 256), new nn.ReLU(),
      new nn.Linear(256, 10)),
    cnn: () => new nn.Sequential(
      new nn.Conv2d(1, 32, 3, { padding: 1 }), new nn.ReLU(), new nn.MaxPool2d(2),
      new nn.Conv2d(32, 64, 3, { padding: 1 }), new nn.ReLU(), new nn.MaxPool2d(2),
      new nn.Flatten(),
      new nn.Linear(64 * 7 * 7, 10)),
  };
};
