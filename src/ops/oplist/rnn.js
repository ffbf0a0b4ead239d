// oplist/rnn.js - the fused pointwise steps of the recurrent layers (kd.nn.LSTM, GRU and their
// cells, lib/nn/rnn*.js): the gate math of one LSTM or GRU time step, after the matrix
// products, in ONE pass (PyTorch's _thnn_fused_lstm_cell / _thnn_fused_gru_cell), and its
// gradient in one more. Kernels: src/cpu/rnn_cell.c (CPU) and cuda/ops_rnn.cu (device). The
// workspace output holds what the backward needs (the activated gates) and carries no gradient
// of its own (PyTorch's output_differentiability [True, True, False]). The backward ops have no
// derivative yet: double backward through them is refused with an error. kd._internal: the
// layers call them, users call the modules. Part of the op list (see ./index.js).
'use strict';

const INTERNAL = { variants: ['function'], ns: ['_internal'], kind: 'pointwise', cpu: 'kd_cpu_rnn_cell' };

module.exports = [
  { name: 'lstmCell', args: 'Tensor gates, Tensor cx', returns: '(Tensor hy, Tensor cy, Tensor workspace)',
    code: 'KD_RNN_LSTM', ...INTERNAL,
    backward: {
      gates: 'lstmCellBackward(grad, grad1, cx, result1, result2)[0]',
      cx: 'lstmCellBackward(grad, grad1, cx, result1, result2)[1]',
    },
    doc: 'One LSTM step from the summed gate pre-activations gates [B, 4H] (input, forget, cell, output) and the cell state cx [B, H]: hy, cy and the activated gates (workspace [B, 4H]).' },
  { name: 'lstmCellBackward', args: 'Tensor gradHy, Tensor gradCy, Tensor cx, Tensor cy, Tensor workspace',
    returns: '(Tensor gradGates, Tensor gradCx)', code: 'KD_RNN_LSTM_BACKWARD', ...INTERNAL,
    doc: 'Gradient of lstmCell with respect to gates and cx, from the gradients of hy and cy.' },
  { name: 'gruCell', args: 'Tensor inputGates, Tensor hiddenGates, Tensor hx', returns: '(Tensor hy, Tensor workspace)',
    code: 'KD_RNN_GRU', ...INTERNAL,
    backward: {
      inputGates: 'gruCellBackward(grad, hx, result1)[0]',
      hiddenGates: 'gruCellBackward(grad, hx, result1)[1]',
      hx: 'gruCellBackward(grad, hx, result1)[2]',
    },
    doc: 'One GRU step from the input projection inputGates [B, 3H] (reset, update, new; with its bias), the hidden projection hiddenGates [B, 3H] (with its bias) and hx [B, H]: hy and the workspace [B, 4H] (r, z, n, the hidden new-gate part).' },
  { name: 'gruCellBackward', args: 'Tensor gradHy, Tensor hx, Tensor workspace',
    returns: '(Tensor gradInputGates, Tensor gradHiddenGates, Tensor gradHx)', code: 'KD_RNN_GRU_BACKWARD', ...INTERNAL,
    doc: 'Gradient of gruCell with respect to inputGates, hiddenGates and hx, from the gradient of hy.' },
];
