// args.js - the bench's command line (bench/run.js --help prints HELP).
'use strict';

const HELP = `usage: node bench/run.js [options]     (npm run bench -- [options])
  --quick            fewer sizes and shorter samples (CI runs this; under a minute)
  --filter <text>    only cases whose name contains <text> (a|b: either)
  --device <dev>     cpu (default) or cuda: the same cases on CUDA tensors, PyTorch CUDA as
                     the peer, device-to-device copy bandwidth as the limit
  --threads <n>      threads for kindling, OpenBLAS, PyTorch and the native programs
                     (default: KINDLING_NUM_THREADS, else the number of CPUs); PyTorch's
                     OpenMP threads wait passively (OMP_WAIT_POLICY=PASSIVE unless set).
                     The load is printed next to the table; ratios measured with a
                     1-minute load average above threads + 0.5 are marked ~
  --rounds <n>       run everything n times in alternating order and keep each side's
                     best round (default 1; see Note [Rounds] in bench/run.js)
  --check-repeat     run the suite twice and report, per case longer than 1 ms, whether
                     each kindling/peer ratio repeated within 10%
  --no-torch         skip the PyTorch peer
  --no-tfjs          skip the TensorFlow.js peer (else installed on first use into
                     bench/.cache/tfjs)
  --no-native        skip the native programs (STREAM, cblas_sgemm)
  --markdown         print the table as Markdown
  --out <file>       where to write the JSON (default bench/out/<date>.json; the SVG chart
                     goes next to it)
  --update-results   write this run's table into bench/RESULTS.md (this machine's section)`;

function parseArgs(argv) {
  const o = { quick: false, filter: null, device: 'cpu', threads: 0, rounds: 1, checkRepeat: false, torch: true,
    tfjs: true, native: true, markdown: false, out: null, updateResults: false };
  for (let i = 0; i < argv.length; i++) {
    let a = argv[i];
    let inline = null;
    const eq = a.indexOf('=');
    if (a.startsWith('--') && eq > 0) { inline = a.slice(eq + 1); a = a.slice(0, eq); }
    const value = () => {
      if (inline !== null) return inline;
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--quick') o.quick = true;
    else if (a === '--filter') o.filter = value();
    else if (a === '--device') o.device = value();
    else if (a === '--threads') o.threads = Number(value());
    else if (a === '--rounds') o.rounds = Number(value());
    else if (a === '--check-repeat') o.checkRepeat = true;
    else if (a === '--no-torch') o.torch = false;
    else if (a === '--no-tfjs') o.tfjs = false;
    else if (a === '--no-native') o.native = false;
    else if (a === '--markdown') o.markdown = true;
    else if (a === '--out') o.out = value();
    else if (a === '--update-results') o.updateResults = true;
    else if (a === '--help' || a === '-h') o.help = true;
    else throw new Error(`unknown option ${argv[i]} (try --help)`);
  }
  if (!Number.isInteger(o.threads) || o.threads < 0) throw new Error('--threads must be a positive integer');
  if (!Number.isInteger(o.rounds) || o.rounds < 1) throw new Error('--rounds must be a positive integer');
  if (o.device === 'gpu') o.device = 'cuda';
  if (o.device !== 'cpu' && o.device !== 'cuda') throw new Error(`--device must be cpu or cuda, not ${o.device}`);
  return o;
}

module.exports = { parseArgs, HELP };
