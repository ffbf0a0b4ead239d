#!/usr/bin/env node
// fuzz.js - `npm run fuzz`: property-based fuzzing of kindling's promise that nothing a user
// passes crashes the process and every bad input is a KindlingError with a stable code.
// Five targets (tools/fuzz/):
//   api          generated call sequences over every op of the op list with hostile arguments
//   safetensors  mutants of valid safetensors files through every loader
//   cycles       cycles through views: with grad on, in-place ops whose other arguments derive
//                from a view of the tensor they modify; every tensor must be freed afterwards
//   graphs       CUDA graph replays after captured tensors were disposed (where the children
//                have CUDA: KINDLING_CUDA=emulate for the emulated GPU; a no-op case without it)
//   library      ops defined at run time (int[] and Tensor[] arguments, saved tensors) called
//                with hostile arguments and array-likes, checked for leaks
// fast-check generates the cases; each runs in a child process (tools/fuzz/pool.js), so a crash,
// an abort, a sanitizer report or a hang is a finding like a wrong exception. A finding is shrunk
// by fast-check to a minimal case, printed with the command that replays it, and the exit status
// is 1. The run goes in rounds of `--batch` cases, each round a fast-check run of its own seed
// (the first is --seed, then +1, ...), so that a finding's replay needs only its round's seed and
// the shrink path. A replay holds for the version of tools/fuzz/ that printed it: a change to an
// arbitrary changes what a seed and path generate.
//   node tools/fuzz.js --seconds 60 --seed 42            every target, the time split between them
//   node tools/fuzz.js --target api --seconds 600 --jobs 2
//   node tools/fuzz.js --asan ...                        the children load the ASan+UBSan addon
//                                                        (npm run test:asan builds it)
//   node tools/fuzz.js --target api --replay 42:3:1:0    one case again, with its finding
//   node tools/fuzz.js --target safetensors --runs 100000  a number of cases instead of a time
'use strict';
const fc = require('fast-check');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Runner } = require('./fuzz/pool');
const { addTally } = require('./fuzz/promise');
const api = require('./fuzz/api');
const safetensors = require('./fuzz/safetensors');
const cycles = require('./fuzz/cycles');
const graphs = require('./fuzz/graphs');
const library = require('./fuzz/library');

// How long a round may go on shrinking a finding past the end of the run.
const SHRINK_MS = 180000;

const TARGETS = {
  api: { arbitrary: () => api.programArb(api.opForms()), batch: 50 },
  safetensors: { arbitrary: () => safetensors.mutantArb, batch: 500 },
  cycles: { arbitrary: () => cycles.caseArb(), batch: 200 },
  graphs: { arbitrary: () => graphs.caseArb, batch: 50 },
  library: { arbitrary: () => library.caseArb, batch: 50 },
};

function parseArgs(argv) {
  const o = { seconds: 20, seed: Date.now() % 2 ** 31, target: 'all', asan: false, replay: null, jobs: 1, runs: Infinity, batch: null, quiet: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--seconds') o.seconds = Number(next());
    else if (a === '--seed') o.seed = Number(next()) | 0;
    else if (a === '--target') o.target = next();
    else if (a === '--asan') o.asan = true;
    else if (a === '--replay') o.replay = next();
    else if (a === '--jobs') o.jobs = Math.max(1, Number(next()) | 0);
    else if (a === '--runs') o.runs = Number(next());
    else if (a === '--batch') o.batch = Number(next());
    else if (a === '--quiet') o.quiet = true;
    else throw new Error(`unknown argument ${a}`);
  }
  if (o.target !== 'all' && !TARGETS[o.target]) throw new Error(`--target is ${Object.keys(TARGETS).join(', ')} or all, not ${o.target}`);
  if (o.replay && o.target === 'all') throw new Error(`--replay needs a --target (${Object.keys(TARGETS).join(', ')})`);
  if (!(o.seconds > 0)) throw new Error('--seconds must be positive');
  return o;
}

/** The environment of the children: the ASan+UBSan addon with --asan. */
function childEnv(asan) {
  if (!asan) return { env: {}, logDir: null };
  const { ASAN_ADDON, asanNodeEnv } = require('./sanitizers');
  if (!fs.existsSync(ASAN_ADDON)) throw new Error('build/asan/Release/kindling.node is not built: run npm run test:asan first');
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-fuzz-asan-'));
  return { env: asanNodeEnv(logDir), logDir };
}

const replayCommand = (o, target, seed, p) => `npm run fuzz -- --target ${target}${o.asan ? ' --asan' : ''} --replay ${seed}:${p}`;

/** The property of a target over one runner; `state.finding` holds the last failure's finding. */
function property(target, runner, state) {
  return fc.asyncProperty(TARGETS[target].arbitrary(), async (input) => {
    state.calls++;
    const finding = await runner.run(target, input);
    if (finding) state.finding = finding;
    return finding === null;
  });
}

const caseJson = (input) => JSON.stringify(input, (k, v) => (typeof v === 'bigint' ? `${v}n` : Number.isNaN(v) ? 'NaN' : v));

function describe(finding) {
  const f = { ...finding };
  const stderr = f.stderr;
  delete f.stderr;
  let s = JSON.stringify(f, (k, v) => (typeof v === 'bigint' ? `${v}n` : v), 2);
  if (stderr) s += `\n  child stderr (last part):\n${stderr.split('\n').slice(-40).map((l) => `    ${l}`).join('\n')}`;
  return s;
}

// A finding's signature, so that one defect found again and again is reported once: for a crash
// the sanitizer's first report line (where in the source), else the message without numbers.
const REPORT = /runtime error: .*|ERROR: AddressSanitizer: [\w-]+|[^\n]*(Assertion|Segmentation|Aborted)[^\n]*/;
function signature(f) {
  const report = f.stderr ? (REPORT.exec(f.stderr) || [''])[0] : '';
  const where = f.stderr ? (/\.\.\/src\/[\w/]+\.c:\d+/.exec(f.stderr) || [''])[0] : '';
  const what = `${f.message || ''}${report}`.replace(/\d+/g, 'N').slice(0, 120);
  return `${f.kind}|${f.reader || ''}|${f.name || ''}|${f.signal || ''}|${where}|${what}`;
}

/** Fuzzes one target for `ms` (or o.runs cases) on `jobs` runners; returns {calls, findings}. */
async function fuzzTarget(o, target, ms, { env, logDir }, log) {
  const deadline = Date.now() + ms;
  const batch = o.batch || TARGETS[target].batch;
  const findings = new Map();
  const tally = { calls: 0, returned: 0, codes: {}, peaks: {} };
  let round = 0;
  let calls = 0;
  const worker = async () => {
    const runner = new Runner({ env, logDir, timeoutMs: o.asan ? 60000 : 20000 });
    try {
      while (Date.now() < deadline && calls < o.runs) {
        const seed = (o.seed + round++) | 0;
        const state = { calls: 0, finding: null };
        const numRuns = Math.min(batch, o.runs - calls);
        const details = await fc.check(property(target, runner, state), { seed, numRuns, interruptAfterTimeLimit: Math.max(deadline - Date.now(), 0) + SHRINK_MS });
        calls += state.calls;
        if (details.failed) {
          const sig = signature(state.finding);
          const replay = replayCommand(o, target, seed, details.counterexamplePath);
          if (!findings.has(sig)) {
            findings.set(sig, { replay, finding: state.finding, input: details.counterexample[0] });
            log(`\nfuzz ${target}: FINDING (${state.finding.kind}); replay: ${replay}\n  case: ${caseJson(details.counterexample[0])}\n  ${describe(state.finding)}`);
          } else {
            log(`fuzz ${target}: the same finding again (${replay})`);
          }
        }
      }
    } finally {
      // fast-check stops waiting for a case at its time limit: one still running is a hang
      const cut = runner.close();
      if (cut && !findings.has(signature(cut.finding))) {
        findings.set(signature(cut.finding), { replay: null, finding: cut.finding, input: cut.input });
        log(`\nfuzz ${target}: FINDING (hang): a case was still running when the run ended (no replay: run the case itself)\n  case: ${caseJson(cut.input)}\n  ${describe(cut.finding)}`);
      }
      addTally(tally, runner.tally);
    }
  };
  await Promise.all(Array.from({ length: o.jobs }, worker));
  return { calls, tally, findings: [...findings.values()] };
}

async function replay(o, { env, logDir }) {
  const [seed, ...rest] = o.replay.split(':');
  const runner = new Runner({ env, logDir, timeoutMs: o.asan ? 60000 : 20000 });
  const state = { calls: 0, finding: null };
  try {
    const details = await fc.check(property(o.target, runner, state), { seed: Number(seed) | 0, path: rest.join(":"), endOnFailure: true });
    if (!details.failed) {
      console.log('fuzz: the case passes now');
      return 0;
    }
    console.log(`fuzz: the case:\n${JSON.stringify(details.counterexample[0], (k, v) => (typeof v === 'bigint' ? `${v}n` : Number.isNaN(v) ? 'NaN' : v), 2)}`);
    console.log(`fuzz: its finding:\n${describe(state.finding)}`);
    return 1;
  } finally {
    runner.close();
  }
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const children = childEnv(o.asan);
  const { logDir } = children;
  if (o.replay) {
    process.exitCode = await replay(o, children);
    return;
  }
  const targets = o.target === 'all' ? Object.keys(TARGETS) : [o.target];
  const summary = [];
  let failed = false;
  for (const target of targets) {
    const t0 = Date.now();
    const ms = (o.seconds * 1000) / targets.length;
    const { calls, tally, findings } = await fuzzTarget(o, target, ms, children, (s) => console.log(s));
    const secs = (Date.now() - t0) / 1000;
    const codes = Object.entries(tally.codes).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v}`).join(', ');
    summary.push(`${target}: ${calls} cases in ${secs.toFixed(1)} s (seed ${o.seed}${o.asan ? ', ASan+UBSan' : ''}), ${findings.length} finding(s)`);
    const peaks = Object.entries(tally.peaks || {}).map(([k, v]) => `; largest ${k}: ${v}`).join('');
    if (!o.quiet) console.log(`fuzz ${target}: ${tally.calls} calls, ${tally.returned} returned; thrown: ${codes}${peaks}`);
    if (findings.length) failed = true;
  }
  if (logDir) {
    const reports = require('./sanitizers').logReports(logDir);
    if (reports.length) {
      failed = true;
      summary.push(`sanitizer reports in ${logDir}: ${reports.map((r) => `${path.basename(r.file)} (${r.summary[0]})`).join(', ')}`);
    } else fs.rmSync(logDir, { recursive: true, force: true });
  }
  console.log(`fuzz: ${summary.join('; ')}`);
  if (failed) process.exitCode = 1;
}

if (require.main === module) {
  main().catch((e) => {
    console.error(`fuzz: ${e.stack || e.message}`);
    process.exitCode = 2;
  });
}

module.exports = { fuzzTarget, parseArgs };
