// profiler/events.js - turns the native profiler's raw events (src/profiler/) into PyTorch's
// FunctionEvents: names ("add" -> "aten::add"), times in microseconds, children, self times
// (total minus the children's totals), CUDA times, input shapes; and groups them into key averages.
'use strict';

const path = require('node:path');

const LIB_DIR = path.resolve(__dirname, '..');

/** The frames of an Error's stack text outside kindling's own lib/ and Node's internals. */
function userFrames(stack) {
  return stack.split('\n').slice(1).map((l) => l.trim().replace(/^at /, ''))
    .filter((f) => f && !f.includes(LIB_DIR) && !f.includes('node:internal'));
}

/** PyTorch's name of an op event: "max.dim" -> "aten::max", "logSoftmax" -> "aten::log_softmax";
 * names with a namespace ("mylib::scale") stay as they are. */
function opDisplayName(name) {
  if (name.includes('::')) return name;
  return `aten::${name.split('.')[0].replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase()}`;
}

/** Raw events (startNs/endNs/parent) and kernels -> FunctionEvents with ids, children, self times
 * and the kernels each op launched. */
function buildEvents(raw, rawKernels, threadId) {
  const events = raw.map((r, id) => ({
    id,
    name: r.kind === 'op' ? opDisplayName(r.name) : r.name,
    kind: r.kind,
    threadId,
    startUs: r.startNs / 1e3,
    endUs: r.endNs / 1e3,
    cpuTimeTotal: (r.endNs - r.startNs) / 1e3,
    selfCpuTimeTotal: 0,
    cudaTimeTotal: 0,
    selfCudaTimeTotal: 0,
    parent: r.parent,
    children: [],
    inputShapes: r.shapes == null ? null : JSON.parse(r.shapes),
    stack: r.stack == null ? null : userFrames(r.stack),
    cudaUs: r.cudaNs === undefined ? null : r.cudaNs / 1e3,
    kernels: [],
  }));
  for (const k of rawKernels) {
    events[k.event].kernels.push({ name: k.name.replace(/^\(|\)$/g, '').trim(), device: k.device, stream: k.stream,
      startUs: k.startNs < 0 ? null : k.startNs / 1e3, durationUs: k.durNs < 0 ? null : k.durNs / 1e3 });
  }
  for (const e of events) if (e.parent >= 0) events[e.parent].children.push(e.id);
  for (const e of events) {
    let childCpu = 0;
    for (const c of e.children) childCpu += events[c].cpuTimeTotal;
    e.selfCpuTimeTotal = Math.max(0, e.cpuTimeTotal - childCpu);
  }
  return events;
}

/** CUDA times: an op timed on its device has that total, others the sum of their children's;
 * self is the total minus the children's totals. Children come after their parent. */
function addCudaTimes(events) {
  const childCuda = new Float64Array(events.length);
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    e.cudaTimeTotal = e.cudaUs === null ? childCuda[i] : Math.max(e.cudaUs, 0);
    e.selfCudaTimeTotal = Math.max(0, e.cudaTimeTotal - childCuda[i]);
    if (e.parent >= 0) childCuda[e.parent] += e.cudaTimeTotal;
  }
}

/** PyTorch's key_averages: one row per name (and input shapes when groupByInputShape, and the
 * first groupByStackN frames of the JS stack when that is > 0). */
function keyAverages(events, groupByInputShape, groupByStackN = 0) {
  const rows = new Map();
  for (const e of events) {
    const shapes = groupByInputShape ? JSON.stringify(e.inputShapes || []) : '';
    const stack = groupByStackN > 0 ? (e.stack || []).slice(0, groupByStackN) : null;
    const key = `${e.name}\u0000${shapes}\u0000${stack ? stack.join('\n') : ''}`;
    let r = rows.get(key);
    if (!r) {
      r = {
        key: e.name, count: 0, cpuTimeTotal: 0, selfCpuTimeTotal: 0, cudaTimeTotal: 0, selfCudaTimeTotal: 0,
        inputShapes: groupByInputShape ? (e.inputShapes || []) : null,
        stack,
      };
      rows.set(key, r);
    }
    r.count++;
    r.cpuTimeTotal += e.cpuTimeTotal;
    r.selfCpuTimeTotal += e.selfCpuTimeTotal;
    r.cudaTimeTotal += e.cudaTimeTotal;
    r.selfCudaTimeTotal += e.selfCudaTimeTotal;
  }
  for (const r of rows.values()) {
    r.cpuTime = r.cpuTimeTotal / r.count;
    r.cudaTime = r.cudaTimeTotal / r.count;
  }
  return [...rows.values()];
}

module.exports = { opDisplayName, buildEvents, addCudaTimes, keyAverages };
