// oplist/rnn.js - the fused pointwise steps of the recurrent layers (kd.nn.LSTM, GRU and their
// cells, lib/nn/rnn*.js): the gate math of one LSTM or GRU time step, after the matrix
// products, in ONE pass (PyTorch's _thnn_fused_lstm_cell / _thnn_fused_gru_cell), and its
// gradient in one more. Kernels: src/cpu/rnn_cell.c (CPU) and cuda/ops_rnn.cu (device). The
// workspace output holds what the backward needs (the activated gates); a gradient of it (double
// backward differentiates the backward's use of it) goes through the activations, so every
// derivative is exact to any order. kd._internal: the layers call them, users call the modules.
// Part of the op list (see ./index.js).
'use strict';

const INTERNAL = { variants: ['function'], ns: ['_internal'], kind: 'pointwise', cpu: 'kd_cpu_rnn_cell' };

// Double backward: the derivatives of the backward ops, written out (the formulas of the ops
// are in src/cpu/rnn_cell_math.h). `q(t, k, n)` is chunk k of n of t along the gate dim.
const q = (t, k, n) => `${t}.chunk(${n}, 1)[${k}]`;
const [I, F, G, O] = [0, 1, 2, 3].map((k) => q('workspace', k, 4));
const [AI, AF, AG, AO] = [0, 1, 2, 3].map((k) => q('grad', k, 4));
const [WI, WF, WG, WO] = [0, 1, 2, 3].map((k) => q('gradWorkspace', k, 4));
const TC = 'cy.tanh()';
const DC = `(gradCy + gradHy * ${O} * (1 - ${TC} * ${TC}))`;
// the adjoint of dc: every output that dc feeds, weighted by its incoming gradient
const S = `(${AI} * ${G} * ${I} * (1 - ${I}) + ${AF} * cx * ${F} * (1 - ${F}) + ${AG} * ${I} * (1 - ${G} * ${G}) + grad1 * ${F})`;
const LSTM_WS = `cat([${DC} * (${AI} * ${G} * (1 - ${I} * 2) + ${AG} * (1 - ${G} * ${G})), ` +
  `${DC} * (${AF} * cx * (1 - ${F} * 2) + grad1), ${DC} * ${I} * (${AI} * (1 - ${I}) - ${AG} * ${G} * 2), ` +
  `gradHy * (${S} * (1 - ${TC} * ${TC}) + ${AO} * ${TC} * (1 - ${O} * 2))], 1)`;
const LSTM_WS_W = `cat([${AI} * ${WI} * (1 - ${I} * 2), ${AF} * ${WF} * (1 - ${F} * 2), -(${AG} * ${WG} * ${G} * 2), ` +
  `${AO} * ${WO} * (1 - ${O} * 2)], 1)`;

const [R, Z, N, HN] = [0, 1, 2, 3].map((k) => q('workspace', k, 4));
const W4 = (k) => `(gradWorkspace == null ? 0 : ${q('gradWorkspace', k, 4)})`;
const [AXR, AXZ, AXN] = [0, 1, 2].map((k) => q('grad', k, 3));
const [AHR, AHZ, AHN] = [0, 1, 2].map((k) => q('grad1', k, 3));
const DN = `(gradHy * (1 - ${Z}) + ${W4(2)})`; // before the tanh
const DNP = `(${DN} * (1 - ${N} * ${N}))`;
const DZ = `(gradHy * (hx - ${N}) + ${W4(1)})`; // before the sigmoid
const DR = `(${DNP} * ${HN} + ${W4(0)})`; // before the sigmoid
const ADR = `((${AXR} + ${AHR}) * ${R} * (1 - ${R}))`;
const ADZ = `((${AXZ} + ${AHZ}) * ${Z} * (1 - ${Z}))`;
const ADNP = `(${AXN} + ${AHN} * ${R} + ${ADR} * ${HN})`;
const ADN = `(${ADNP} * (1 - ${N} * ${N}))`;

module.exports = [
  { name: 'lstmCell', args: 'Tensor gates, Tensor cx', returns: '(Tensor hy, Tensor cy, Tensor workspace)',
    code: 'KD_RNN_LSTM', ...INTERNAL,
    backward: {
      gates: 'lstmCellBackward(grad, grad1, cx, result1, result2, grad2)[0]',
      cx: 'lstmCellBackward(grad, grad1, cx, result1, result2, grad2)[1]',
    },
    doc: 'One LSTM step from the summed gate pre-activations gates [B, 4H] (input, forget, cell, output) and the cell state cx [B, H]: hy, cy and the activated gates (workspace [B, 4H]).' },
  { name: 'lstmCellBackward', args: 'Tensor gradHy, Tensor gradCy, Tensor cx, Tensor cy, Tensor workspace, Tensor? gradWorkspace',
    returns: '(Tensor gradGates, Tensor gradCx)', code: 'KD_RNN_LSTM_BACKWARD', ...INTERNAL,
    backward: {
      gradHy: `${S} * ${O} * (1 - ${TC} * ${TC}) + ${AO} * ${TC} * ${O} * (1 - ${O})`,
      gradCy: S,
      cx: `${AF} * ${DC} * ${F} * (1 - ${F})`,
      cy: `(1 - ${TC} * ${TC}) * gradHy * ${O} * (${AO} * (1 - ${O}) - ${S} * ${TC} * 2)`,
      workspace: `gradWorkspace == null ? ${LSTM_WS} : ${LSTM_WS} + ${LSTM_WS_W}`,
      gradWorkspace: `cat([${AI} * ${I} * (1 - ${I}), ${AF} * ${F} * (1 - ${F}), ${AG} * (1 - ${G} * ${G}), ${AO} * ${O} * (1 - ${O})], 1)`,
    },
    doc: 'Gradient of lstmCell with respect to gates and cx, from the gradients of hy, cy (and of the workspace).' },
  { name: 'gruCell', args: 'Tensor inputGates, Tensor hiddenGates, Tensor hx', returns: '(Tensor hy, Tensor workspace)',
    code: 'KD_RNN_GRU', ...INTERNAL,
    backward: {
      inputGates: 'gruCellBackward(grad, hx, result1, grad1)[0]',
      hiddenGates: 'gruCellBackward(grad, hx, result1, grad1)[1]',
      hx: 'gruCellBackward(grad, hx, result1, grad1)[2]',
    },
    doc: 'One GRU step from the input projection inputGates [B, 3H] (reset, update, new; with its bias), the hidden projection hiddenGates [B, 3H] (with its bias) and hx [B, H]: hy and the workspace [B, 4H] (r, z, n, the hidden new-gate part).' },
  { name: 'gruCellBackward', args: 'Tensor gradHy, Tensor hx, Tensor workspace, Tensor? gradWorkspace',
    returns: '(Tensor gradInputGates, Tensor gradHiddenGates, Tensor gradHx)', code: 'KD_RNN_GRU_BACKWARD', ...INTERNAL,
    backward: {
      gradHy: `${ADN} * (1 - ${Z}) + ${ADZ} * (hx - ${N}) + grad2 * ${Z}`,
      hx: `${ADZ} * gradHy`,
      workspace: `cat([(${AXR} + ${AHR}) * ${DR} * (1 - ${R} * 2) + ${AHN} * ${DNP}, ` +
        `(${AXZ} + ${AHZ}) * ${DZ} * (1 - ${Z} * 2) - ${ADN} * gradHy + grad2 * gradHy, ` +
        `-(${ADNP} * ${DN} * ${N} * 2 + ${ADZ} * gradHy), ${ADR} * ${DNP}], 1)`,
      gradWorkspace: `cat([${ADR}, ${ADZ}, ${ADN}, ${AHN}], 1)`,
    },
    doc: 'Gradient of gruCell with respect to inputGates, hiddenGates and hx, from the gradients of hy (and of the workspace).' },
];
