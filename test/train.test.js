// train.test.js - kd.train (progress bar, SVG curves, table), the Fashion-MNIST example's IDX reader
// and missing-dataset message, and optimizer state surviving kd.tidy (the examples' loop shape).
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const zlib = require('node:zlib');
const kd = require('..');

/** A stream that records what is written. */
function sink(isTTY) {
  const s = { isTTY, chunks: [], write(x) { this.chunks.push(x); return true; } };
  return s;
}

describe('kd.train.ProgressBar', function () {
  it('prints one line per 10% when the stream is not a TTY, then a final line', function () {
    const out = sink(false);
    const bar = new kd.train.ProgressBar({ total: 100, label: 'epoch 1/2', unit: 'img', stream: out });
    for (let i = 0; i < 100; i++) bar.tick(1, { loss: 1 / (i + 1) });
    const last = bar.finish({ acc: 0.5 });
    assert.equal(out.chunks.length, 10); // 10%..90% and the final line
    assert.ok(out.chunks.every((c) => c.endsWith('\n') && !c.includes('\r')));
    assert.match(out.chunks[0], /^epoch 1\/2 \[.*\] 10\/100\s+10% .* img\/s ETA \d+:\d\d loss 0\.1000$/m);
    assert.match(last, /100\/100 100% .* in \d+:\d\d loss 0\.01000 acc 0\.5000$/);
    bar.tick();
    assert.equal(out.chunks.length, 10, 'nothing drawn after finish');
  });

  it('redraws one line with \\r on a TTY', function () {
    const out = sink(true);
    const bar = new kd.train.ProgressBar({ total: 4, stream: out, intervalMs: 0 });
    for (let i = 0; i < 4; i++) bar.tick();
    bar.finish();
    assert.ok(out.chunks.length >= 5);
    assert.ok(out.chunks.every((c) => c.startsWith('\r')));
    assert.ok(out.chunks[out.chunks.length - 1].endsWith('\n'));
  });

  it('has rate and ETA; open-ended bars count without a total', function () {
    const bar = new kd.train.ProgressBar({ total: 10, enabled: false });
    bar.tick(5);
    assert.ok(bar.rate > 0);
    assert.ok(bar.eta >= 0);
    const open = new kd.train.ProgressBar({ stream: sink(false) });
    open.tick(3);
    assert.match(open.line(), /^3 it /);
    assert.ok(Number.isNaN(open.eta));
    assert.throws(() => new kd.train.ProgressBar({ total: -1 }), TypeError);
    assert.equal(kd.train.formatDuration(3725), '1:02:05');
    assert.equal(kd.train.formatDuration(65), '1:05');
  });

  it('progress() wraps sync and async iterables and finishes the bar (also on break)', async function () {
    const out = sink(false);
    const seen = [];
    for (const x of kd.train.progress([1, 2, 3, 4], { stream: out, everyPercent: 50 })) seen.push(x);
    assert.deepEqual(seen, [1, 2, 3, 4]);
    assert.match(out.chunks[out.chunks.length - 1], /4\/4 100%/);
    async function* gen() { yield 1; yield 2; yield 3; }
    const wrapped = kd.train.progress(gen(), { stream: out, total: 3 });
    for await (const x of wrapped) if (x === 2) break;
    assert.ok(wrapped.bar.finished);
    assert.equal(wrapped.bar.count, 1);
  });
});

describe('kd.train charts and table', function () {
  const history = [1, 2, 3].map((epoch) => ({ epoch, trainLoss: 1 / epoch, testLoss: 1.2 / epoch, testAcc: 0.8 + epoch / 100, seconds: 2 }));

  it('curvesSvg has a loss panel and an accuracy panel', function () {
    const svg = kd.train.curvesSvg(history, { title: 'a <b> & c' });
    assert.match(svg, /^<\?xml version="1.0" encoding="UTF-8"\?>\n<svg xmlns="http:\/\/www.w3.org\/2000\/svg" width="960" height="320"/);
    assert.equal((svg.match(/<path /g) || []).length, 3); // trainLoss, testLoss, testAcc
    assert.ok(svg.includes('a &lt;b&gt; &amp; c: loss') && svg.includes('accuracy'));
    assert.ok(!svg.includes('seconds'), 'time columns are not plotted');
    assert.ok(!/NaN|undefined/.test(svg));
  });

  it('lineChartSvg takes named arrays or points; degenerate data still draws', function () {
    const svg = kd.train.lineChartSvg({ a: [1, 1, 1], b: [null, 2] }, { title: 't' });
    assert.equal((svg.match(/<path /g) || []).length, 2);
    assert.ok(!/NaN|undefined|Infinity/.test(svg));
    const empty = kd.train.lineChartSvg([], {});
    assert.ok(!/NaN|undefined|Infinity/.test(empty));
    const pts = kd.train.lineChartSvg([{ name: 'p', points: [[0.5, 3], [2.5, 4]] }]);
    assert.ok(pts.includes('<path '));
  });

  it('writeCurves writes the file; table lines up columns', function () {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'kd-train-')), 'sub', 'c.svg');
    kd.train.writeCurves(file, history);
    assert.ok(fs.readFileSync(file, 'utf8').includes('</svg>'));
    // a folder that cannot be made: an error at once (mkdir -p under /proc never returned)
    const io = (re) => (e) => e instanceof kd.KindlingError && e.code === 'KD_IO_ERROR' && re.test(e.message);
    assert.throws(() => kd.train.writeCurves(path.join(file, 'x', 'c.svg'), history), io(/^writeCurves\(\): ENOTDIR/));
    if (fs.existsSync('/proc/self')) assert.throws(() => kd.train.writeCurves('/proc/kindling-no-such-dir/c.svg', history), io(/ENOENT/));
    const lines = kd.train.table(history).split('\n');
    assert.equal(lines.length, 4);
    assert.match(lines[0], /^epoch\s+trainLoss\s+testLoss\s+testAcc\s+seconds$/);
    assert.ok(lines.every((l) => l.length === lines[0].length));
  });
});

describe('examples/fashion-mnist data reader', function () {
  const { readIdx, loadFashionMnist, DatasetMissingError } = require('../examples/fashion-mnist/data');

  function idx(dims, data) {
    const head = Buffer.alloc(4 + 4 * dims.length);
    head[2] = 0x08;
    head[3] = dims.length;
    dims.forEach((d, i) => head.writeUInt32BE(d, 4 + 4 * i));
    return Buffer.concat([head, Buffer.from(data)]);
  }

  it('reads gzip\'d IDX files into normalised images and int64 labels', function () {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-fmnist-'));
    const px = Array.from({ length: 2 * 28 * 28 }, (_, i) => i % 256);
    for (const [img, lbl] of [['train-images-idx3-ubyte', 'train-labels-idx1-ubyte'], ['t10k-images-idx3-ubyte', 't10k-labels-idx1-ubyte']]) {
      fs.writeFileSync(path.join(dir, `${img}.gz`), zlib.gzipSync(idx([2, 28, 28], px)));
      fs.writeFileSync(path.join(dir, `${lbl}.gz`), zlib.gzipSync(idx([2], [3, 9])));
    }
    assert.deepEqual(readIdx(path.join(dir, 't10k-labels-idx1-ubyte.gz')).dims, [2]);
    const { train, test } = loadFashionMnist({ dir });
    assert.deepEqual(train.images.shape, [2, 1, 28, 28]);
    assert.equal(train.images.dtype, 'float32');
    assert.deepEqual(Array.from(test.labels.dataSync(), Number), [3, 9]);
    const v = train.images.dataSync();
    assert.ok(Math.abs(v[255] - (1 - 0.2860) / 0.3530) < 1e-5);
    kd.dispose([train, test]);
  });

  it('says how to install the dataset when it is missing', function () {
    assert.throws(() => loadFashionMnist({ dir: '/nonexistent/fashion' }),
      (e) => e instanceof DatasetMissingError && /apt-get install dataset-fashion-mnist/.test(e.message) && /FASHION_MNIST_DIR/.test(e.message));
  });
});

describe('training loop shape used by the examples', function () {
  it('optimizer state made inside kd.tidy survives it (SGD momentum, Adam)', function () {
    for (const make of [(p) => new kd.optim.SGD(p, { lr: 0.1, momentum: 0.9 }), (p) => new kd.optim.Adam(p, { lr: 0.01 })]) {
      kd.manualSeed(0);
      const model = kd.tidy(() => new kd.nn.Linear(3, 1));
      const opt = make(model.parameters());
      const x = kd.randn(8, 3);
      const y = kd.randn(8, 1);
      const losses = [];
      for (let i = 0; i < 5; i++) {
        losses.push(kd.tidy(() => {
          opt.zeroGrad();
          const loss = kd.nn.functional.mseLoss(model(x), y);
          loss.backward();
          opt.step();
          return loss.item();
        }));
      }
      assert.ok(losses[4] < losses[0]);
      kd.dispose([x, y, model.parameters(), [...opt.state.values()]]);
    }
  });
});
