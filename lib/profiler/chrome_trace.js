// profiler/chrome_trace.js - a profile as Chrome trace JSON (the Trace Event Format that
// chrome://tracing and Perfetto load): one complete ('X') event per op, autograd node and user
// range, with ts/dur in microseconds; events of a thread nest by time. A CUDA op's GPU time is in
// its args ('cuda time us'); its kernels are 'kernel' events on a 'stream' row of the GPU's
// process (GPU times aligned with the CPU's at the device's first recorded event).
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
    if (e.cudaUs !== null) args['cuda time us'] = e.cudaUs;
    if (e.stack) args['Call stack'] = e.stack.join(';');
    trace.push({ ph: 'X', cat: CATEGORY[e.kind], name: e.name, pid, tid: e.threadId, ts: e.startUs,
      dur: e.endUs - e.startUs, args });
    for (const k of e.kernels) {
      if (k.startUs === null) continue;
      devices.add(k.device);
      trace.push({ ph: 'X', cat: 'kernel', name: k.name, pid: `GPU ${k.device}`, tid: `stream ${k.stream}`, ts: k.startUs,
        dur: k.durationUs || 0, args: { 'External id': e.id, device: k.device, stream: k.stream } });
    }
  }
  for (const d of devices) trace.push({ name: 'process_name', ph: 'M', pid: `GPU ${d}`, tid: 0, args: { name: `GPU ${d}` } });
  return { schemaVersion: 1, displayTimeUnit: 'ms', traceEvents: trace };
}

module.exports = { chromeTrace };
