// profiler/chrome_trace.js - a profile as Chrome trace JSON (the Trace Event Format that
// chrome://tracing and Perfetto load): one complete ('X') event per op, autograd node, user range
// and kernel, with ts/dur in microseconds; ops on the CPU thread nest by time, kernels sit on a
// 'stream' row of the GPU's process.
'use strict';

const CATEGORY = { op: 'cpu_op', backward: 'cpu_op', user: 'user_annotation' };

function chromeTrace(events, pid) {
  const trace = [
    { name: 'process_name', ph: 'M', pid, tid: 0, args: { name: 'CPU' } },
  ];
  const devices = new Set();
  for (const e of events) {
    const args = { 'External id': e.id };
    if (e.inputShapes) args['Input Dims'] = e.inputShapes;
    trace.push({ ph: 'X', cat: CATEGORY[e.kind], name: e.name, pid, tid: e.threadId, ts: e.startUs,
      dur: e.endUs - e.startUs, args });
    for (const k of e.kernels) {
      devices.add(k.device);
      trace.push({ ph: 'X', cat: 'kernel', name: k.name, pid: `GPU ${k.device}`, tid: `stream ${k.stream}`, ts: k.startUs,
        dur: k.durationUs, args: { 'External id': e.id, device: k.device, stream: k.stream } });
    }
  }
  for (const d of devices) trace.push({ name: 'process_name', ph: 'M', pid: `GPU ${d}`, tid: 0, args: { name: `GPU ${d}` } });
  return { schemaVersion: 1, displayTimeUnit: 'ms', traceEvents: trace };
}

module.exports = { chromeTrace };
