// cases.js - the benchmark cases. Each case is data plus three small functions, so adding
// one is adding an entry here (and, for a PyTorch comparison, a function of the same name
// in bench/peers/torch_peer.py's CASES):
//   name        id, shared with the peers; --filter matches it
//   title       what is measured, one line
//   sizes       problem sizes; quickSizes: the subset --quick runs
//   label(n)    how a size prints
//   setup(kd, n) -> state    inputs, created once per size (not timed)
//   run(state)               ONE call of the op, result disposed (timed, batched)
//   teardown(state)          disposes the inputs
//   perCallUnit 'us' to show the time per call in microseconds (overhead cases)
//   rate        {unit, of(n, seconds)}: a throughput to show (GB/s, GFLOP/s)
//   limit       'stream.copy' | 'stream.triad' | 'stream.add': % of that measured bandwidth,
//               shown for sizes whose bytes(n) are >= 2x the last-level cache (smaller ones
//               run from cache, where DRAM bandwidth is no limit)
//   bytes(n)    bytes one call moves (for the limit rule above)
//   headline    sizes that are targets of the project: repeated in the summary
//   peers       {torch: true, native: 'sgemm'}: peers to run on the same sizes
'use strict';

const human = (n) => (n >= 1 << 20 && n % (1 << 20) === 0 ? `${n >> 20}M`
  : n >= 1024 && n % 1024 === 0 ? `${n >> 10}K` : String(n));

module.exports = [
  {
    name: 'add.overhead',
    title: 'a.add(b) on 1-element float32 tensors: per-op overhead from JS',
    sizes: [1],
    quickSizes: [1],
    label: () => '1',
    setup: (kd, n) => ({ a: kd.randn([n]), b: kd.randn([n]) }),
    run: (s) => { s.a.add(s.b).dispose(); },
    teardown: (s) => { s.a.dispose(); s.b.dispose(); },
    perCallUnit: 'us',
    headline: [1],
    peers: { torch: true },
  },
  {
    name: 'add',
    title: 'c = a.add(b), float32, into a new tensor (12 bytes/element)',
    sizes: [1 << 10, 1 << 14, 1 << 18, 1 << 20, 1 << 22, 1 << 24],
    quickSizes: [1 << 10, 1 << 20, 1 << 24],
    label: human,
    setup: (kd, n) => ({ a: kd.randn([n]), b: kd.randn([n]) }),
    run: (s) => { s.a.add(s.b).dispose(); },
    teardown: (s) => { s.a.dispose(); s.b.dispose(); },
    rate: { unit: 'GB/s', of: (n, sec) => (12 * n) / sec / 1e9 },
    bytes: (n) => 12 * n,
    limit: 'stream.copy',
    headline: [1 << 24],
    peers: { torch: true },
  },
  {
    name: 'matmul',
    title: 'kd.matmul(a, b), float32, n x n',
    sizes: [64, 128, 256, 512, 1024],
    quickSizes: [64, 256, 1024],
    label: (n) => `${n}x${n}`,
    setup: (kd, n) => ({ a: kd.randn([n, n]), b: kd.randn([n, n]), kd }),
    run: (s) => { s.kd.matmul(s.a, s.b).dispose(); },
    teardown: (s) => { s.a.dispose(); s.b.dispose(); },
    rate: { unit: 'GFLOP/s', of: (n, sec) => (2 * n ** 3) / sec / 1e9 },
    headline: [1024],
    peers: { torch: true, native: 'sgemm' },
  },
];
