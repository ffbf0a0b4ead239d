// profiler/chrome_trace.js - a profile as Chrome trace JSON (the Trace Event Format that
// chrome://tracing and Perfetto load): one complete ('X') event per op, autograd node and user
// range, with ts/dur in microseconds; events of a thread nest by time. A CUDA op's GPU time is in
// its args ('cuda time us').
'use strict';

const CATEGORY = { op: 'cpu_op', backward: 'cpu_op', user: 'user_annotation' };

function chromeTrace(events, pid) {
  const trace = [
    { name: 'process_name', ph: 'M', pid, tid: 0, args: { name: 'CPU' } },
  ];
  for (const e of events) {
    const args = { 'External id': e.id };
    if (e.inputShapes) args['Input Dims'] = e.inputShapes;
    if (e.cudaUs !== null) args['cuda time us'] = e.cudaUs;
    trace.push({ ph: 'X', cat: CATEGORY[e.kind], name: e.name, pid, tid: e.threadId, ts: e.startUs,
      dur: e.endUs - e.startUs, args });
  }
  return { schemaVersion: 1, displayTimeUnit: 'ms', traceEvents: trace };
}

module.exports = { chromeTrace };
