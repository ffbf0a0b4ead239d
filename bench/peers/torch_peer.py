"""torch_peer.py - the PyTorch side of kindling's benchmark (bench/lib/torch.js runs it).

Speaks JSON lines on stdin/stdout. The first line configures it:
  {"threads": 2, "device": "cpu"}
and it answers {"torch": "1.13.0", "threads": 2, "device": "cpu", "omp_wait_policy": "PASSIVE"} (plus
"gpu" on CUDA; bench/lib/torch.js starts it with OMP_WAIT_POLICY=PASSIVE). Then each
line asks for one measurement:
  {"name": "add", "size": 1024, "warmup_s": 0.05, "min_sample_s": 0.02, "repeats": 11}
and gets {"name", "size", "batch", "median_s", "best_s", "samples"} (or "error") back, so the bench
can time kindling and PyTorch on the same case one right after the other. Each case is timed
exactly as the JS side times kindling: calls are batched so one sample lasts at least
min_sample_s (after warmup_s of warm-up), `repeats` samples are taken, and median_s is the
median time per call. A case this file does not know gets an "error".
With "device": "cuda" inputs live on the GPU and every sample ends with
torch.cuda.synchronize(); "limit.d2d_copy" then times the device-to-device copy (the limit).
Results are dropped right away (refcounting frees them), as the JS side disposes its own.

Paired samples (Note [Paired samples] in bench/lib/timing.js): instead of one request per
measurement, the bench can open a case, ask for its samples one at a time (alternating with
kindling's), and close it:
  {"op": "open", "name", "size", "warmup_s", "min_sample_s"}  -> {"name", "size", "batch"}
  {"op": "sample", "settle_s": 0.01}                          -> {"sample_s"}
  {"op": "close"}                                             -> {"closed": true}
"""
import json
import os
import statistics
import sys
import time

import torch


DEV = "cpu"


def randn(*shape):
    return torch.randn(*shape).to(DEV)


def case_add(size):
    a, b = randn(size), randn(size)
    return lambda: a.add(b)


def case_matmul(size):
    a, b = randn(size, size), randn(size, size)
    return lambda: torch.matmul(a, b)


def case_matmul_bf16(size):
    a, b = randn(size, size).bfloat16(), randn(size, size).bfloat16()
    return lambda: torch.matmul(a, b)


def case_sum(dim):
    def make(size):
        x = randn(size, size)
        return (lambda: x.sum()) if dim is None else (lambda: x.sum(dim))
    return make


def case_softmax(dim):
    def make(size):
        x = randn(size, 1024)
        return lambda: torch.softmax(x, dim)
    return make


def case_layer_norm(size):
    x = randn(size, 1024)
    return lambda: torch.nn.functional.layer_norm(x, [1024])


def case_cumsum(dim):
    def make(size):
        x = randn(size, size)
        return lambda: torch.cumsum(x, dim)
    return make


def case_conv2d(cin, cout):
    def make(size):
        x, w = randn(size, cin, 28, 28), randn(cout, cin, 3, 3)
        return lambda: torch.nn.functional.conv2d(x, w, padding=1)
    return make


def case_alloc(size):
    return lambda: torch.empty(size, device=DEV)


def case_data(size):
    t = randn(size)
    return lambda: t.item()


def case_grad(size):
    """The overhead cases with a recorded graph: `a` requires grad (run outside no_grad)."""
    shape = (size,) if size == 1 else (size, size)
    a, b = randn(*shape).requires_grad_(), randn(*shape)
    return (lambda: a.add(b)) if size == 1 else (lambda: torch.matmul(a, b))


def case_nograd(size):
    """add.overhead.nograd: `a` requires grad, the call runs under no_grad (run_case turns grad
    off for every case whose name does not end in .grad): the reference of add.overhead.grad."""
    a, b = randn(size).requires_grad_(), randn(size)
    return lambda: a.add(b)


def case_mlp_step(size):
    """mlp.step.grad: forward (linear-relu-linear-cross_entropy) + backward of a 784-256-10 MLP, batch `size`."""
    F = torch.nn.functional
    x, y = randn(size, 784), torch.randint(0, 10, (size,)).to(DEV)
    ps = [(randn(*s) * 0.05).requires_grad_() for s in ((256, 784), (256,), (10, 256), (10,))]
    w1, b1, w2, b2 = ps

    def run():
        F.cross_entropy(F.linear(F.relu(F.linear(x, w1, b1)), w2, b2), y).backward()
        for p in ps:
            p.grad = None
    return run


def case_d2d_copy(size):
    """The limit on a GPU: device-to-device copy of `size` float32 elements."""
    a, b = randn(size), torch.empty(size, device=DEV)
    return lambda: b.copy_(a)


def fashion_model(kind):
    """examples/fashion-mnist/models.js's models, with PyTorch's default initialisation."""
    nn = torch.nn
    if kind == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 7 * 7, 10))


def case_train_step(kind):
    """One training step (zero_grad, forward, cross-entropy, backward, Adam step) on a batch of
    `size` random 1x28x28 images with random labels, as bench/cases.js's train.* cases."""
    def make(size):
        torch.manual_seed(0)
        model = fashion_model(kind).to(DEV)
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        x = randn(size, 1, 28, 28)
        y = torch.randint(0, 10, (size,)).to(DEV)
        loss_fn = torch.nn.CrossEntropyLoss()

        def step():
            with torch.enable_grad():
                opt.zero_grad()
                loss = loss_fn(model(x), y)
                loss.backward()
                opt.step()
        return step
    return make


def case_rnn_step(kind):
    """lstm.wlm.step / gru.wlm.step: word_language_model's 2-layer recurrent layer (200 -> 200,
    dropout 0.2), input [35, size, 200] that requires grad, a given state; forward + backward of
    the output, gradients cleared, as bench/cases.js's cases."""
    def make(size):
        torch.manual_seed(0)
        model = getattr(torch.nn, kind)(200, 200, 2, dropout=0.2).to(DEV)
        model.train()
        x = randn(35, size, 200).requires_grad_()
        g = randn(35, size, 200)
        h0, c0 = randn(2, size, 200), randn(2, size, 200)
        hx = (h0, c0) if kind == "LSTM" else h0

        def step():
            with torch.enable_grad():
                out, _ = model(x, hx)
                out.backward(g)
                for p in model.parameters():
                    p.grad = None
                x.grad = None
        return step
    return make


def case_wlm_train_step(size):
    """wlm.lstm.train_step: one training step of pytorch/examples' word_language_model (LSTM,
    emsize = nhid = 200, 2 layers, dropout 0.2, bptt 35, batch 20, lr 20, clip 0.25) for a
    vocabulary of `size` words, as its main.py's train() does it, as bench/cases.js's case."""
    torch.manual_seed(0)
    nn = torch.nn

    class RNNModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.drop = nn.Dropout(0.2)
            self.encoder = nn.Embedding(size, 200)
            self.rnn = nn.LSTM(200, 200, 2, dropout=0.2)
            self.decoder = nn.Linear(200, size)

        def forward(self, input, hidden):
            output, hidden = self.rnn(self.drop(self.encoder(input)), hidden)
            decoded = self.decoder(self.drop(output)).view(-1, size)
            return torch.nn.functional.log_softmax(decoded, dim=1), hidden

    model = RNNModel().to(DEV)
    model.train()
    criterion = nn.NLLLoss()
    data = torch.randint(0, size, (35, 20)).to(DEV)
    targets = torch.randint(0, size, (700,)).to(DEV)
    state = {"hidden": (torch.zeros(2, 20, 200, device=DEV), torch.zeros(2, 20, 200, device=DEV))}

    def step():
        with torch.enable_grad():
            model.zero_grad()
            hidden = tuple(h.detach() for h in state["hidden"])
            output, hidden = model(data, hidden)
            loss = criterion(output, targets)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
            for p in model.parameters():
                p.data.add_(p.grad, alpha=-20)
            loss.item()
            state["hidden"] = hidden
    return step


def case_optim(name, **options):
    """One step of torch.optim.<name> (foreach=True) over the Fashion-MNIST CNN's parameters with
    fixed gradients, as bench/cases.js's optim.* cases."""
    def make(size):
        torch.manual_seed(0)
        params = list(fashion_model("cnn").to(DEV).parameters())
        for p in params:
            p.grad = torch.randn_like(p) * 0.01
        opt = getattr(torch.optim, name)(params, foreach=True, **options)
        for _ in range(5):
            opt.step()
        return opt.step
    return make


def case_grid_sample(grad):
    """gridSample.bilinear / gridSample.bilinear.grad: F.grid_sample bilinear, zeros padding,
    align_corners=False, input [size, 32, 64, 64] at a [size, 64, 64, 2] grid in [-1.1, 1.1]; the
    forward, or forward + backward for the input and the grid, as bench/cases.js's cases."""
    def make(size):
        torch.manual_seed(0)
        x = randn(size, 32, 64, 64)
        g = (torch.rand(size, 64, 64, 2) * 2.2 - 1.1).to(DEV)
        if not grad:
            return lambda: torch.nn.functional.grid_sample(x, g, align_corners=False)
        x.requires_grad_()
        g.requires_grad_()
        go = randn(size, 32, 64, 64)

        def step():
            with torch.enable_grad():
                torch.nn.functional.grid_sample(x, g, align_corners=False).backward(go)
                x.grad = None
                g.grad = None
        return step
    return make


CASES = {
    "add.overhead": case_add,
    "matmul.overhead": case_matmul,
    "add.overhead.grad": case_grad,
    "matmul.overhead.grad": case_grad,
    "add": case_add,
    "sum": case_sum(None),
    "sum.dim0": case_sum(0),
    "sum.dim1": case_sum(1),
    "matmul": case_matmul,
    "matmul.bf16": case_matmul_bf16,
    "softmax": case_softmax(1),
    "softmax.dim0": case_softmax(0),
    "layerNorm": case_layer_norm,
    "cumsum.dim1": case_cumsum(1),
    "cumsum.dim0": case_cumsum(0),
    "conv2d.c32": case_conv2d(32, 64),
    "conv2d.c1": case_conv2d(1, 32),
    "alloc.small": case_alloc,
    "alloc.1mb": case_alloc,
    "data.roundtrip": case_data,
    "limit.d2d_copy": case_d2d_copy,
    "train.mlp.step": case_train_step("mlp"),
    "train.cnn.step": case_train_step("cnn"),
    "lstm.wlm.step": case_rnn_step("LSTM"),
    "gru.wlm.step": case_rnn_step("GRU"),
    "gridSample.bilinear": case_grid_sample(False),
    "gridSample.bilinear.grad": case_grid_sample(True),
    "wlm.lstm.train_step": case_wlm_train_step,

    "optim.SGD.step": case_optim("SGD", lr=0.01, momentum=0.9),
    "optim.Adam.step": case_optim("Adam"),
    "optim.Adadelta.step": case_optim("Adadelta"),
    "optim.Adamax.step": case_optim("Adamax"),
    "optim.ASGD.step": case_optim("ASGD", lr=1e-3),
    "optim.NAdam.step": case_optim("NAdam"),
    "optim.RAdam.step": case_optim("RAdam"),
    "optim.Rprop.step": case_optim("Rprop", lr=1e-3),
    "optim.RMSprop.step": case_optim("RMSprop"),
    "optim.Adagrad.step": case_optim("Adagrad"),

    "add.overhead.nograd": case_nograd,
    "mlp.step.grad": case_mlp_step,
}

# CPU kernel speed checks (issue 4), the kernel.* cases of bench/cases.js.
def case_kernel(fn):
    def make(n):
        x, y = randn(n, n), randn(n, n)
        i1, i2 = torch.randint(0, n, (n,)).to(DEV), torch.randint(0, n, (n, n)).to(DEV)
        flat = randn(n * n)
        a, b = randn(32, n, 32), randn(32, 32, n)
        return lambda: fn(x, y, i1, i2, flat, a, b)
    return make


def case_vision(arch, fused=False):
    """bench/cases.js's vision.* cases: torchvision's model, eval mode (fused: BatchNorm folded
    into the convolutions by torch.fx), one forward of `size` random 3x224x224 images under
    inference_mode."""
    def make(size):
        import torchvision
        torch.manual_seed(0)
        model = getattr(torchvision.models, arch)().eval().to(DEV)
        if fused:
            from torch.fx.experimental.optimization import fuse
            model = fuse(model)
        x = randn(size, 3, 224, 224)

        def forward():
            with torch.inference_mode():
                return model(x)
        return forward
    return make


CASES.update({
    "vision.resnet18": case_vision("resnet18"),
    "vision.mobilenet_v2": case_vision("mobilenet_v2"),
    "vision.vit_b_16": case_vision("vit_b_16"),
    "vision.resnet18.fused": case_vision("resnet18", fused=True),
    "vision.mobilenet_v2.fused": case_vision("mobilenet_v2", fused=True),
})


CASES.update({
    "kernel.indexSelect.dim0": case_kernel(lambda x, y, i1, i2, f, a, b: torch.index_select(x, 0, i1)),
    "kernel.indexSelect.dim1": case_kernel(lambda x, y, i1, i2, f, a, b: torch.index_select(x, 1, i1)),
    "kernel.gather.dim1": case_kernel(lambda x, y, i1, i2, f, a, b: torch.gather(x, 1, i2)),
    "kernel.index.tensor": case_kernel(lambda x, y, i1, i2, f, a, b: x[i1]),
    "kernel.scatterAdd.dim0": case_kernel(lambda x, y, i1, i2, f, a, b: torch.scatter_add(x, 0, i2, y)),
    "kernel.topk.k10": case_kernel(lambda x, y, i1, i2, f, a, b: torch.topk(x, 10).values),
    "kernel.bmm.attention": case_kernel(lambda x, y, i1, i2, f, a, b: torch.bmm(a, b)),
    "kernel.cat.dim1": case_kernel(lambda x, y, i1, i2, f, a, b: torch.cat([x, y], 1)),
    "kernel.flip.dim1": case_kernel(lambda x, y, i1, i2, f, a, b: torch.flip(x, [1])),
    "kernel.repeat.2x2": case_kernel(lambda x, y, i1, i2, f, a, b: x.repeat(2, 2)),
    "kernel.elu": case_kernel(lambda x, y, i1, i2, f, a, b: torch.nn.functional.elu(f)),
    "kernel.softplus": case_kernel(lambda x, y, i1, i2, f, a, b: torch.nn.functional.softplus(f)),
    "kernel.rsqrt": case_kernel(lambda x, y, i1, i2, f, a, b: torch.rsqrt(f)),
    "kernel.argmax.dim0": case_kernel(lambda x, y, i1, i2, f, a, b: torch.argmax(x, 0)),
})


def case_sdpa(grad):
    """sdpa / sdpa.grad: torch 1.13's math composition of scaled dot-product attention over
    [1, 12, size, 64] float32 (1.13 has no F.scaled_dot_product_attention), with backward."""
    def make(size):
        q, k, v = (randn(1, 12, size, 64).requires_grad_(grad) for _ in range(3))
        g = randn(1, 12, size, 64)

        def forward():
            return torch.softmax(q @ k.transpose(-2, -1) * 0.125, -1) @ v
        if not grad:
            return forward

        def run():
            forward().backward(g)
            for t in (q, k, v):
                t.grad = None
        return run
    return make


CASES["sdpa"] = case_sdpa(False)
CASES["sdpa.grad"] = case_sdpa(True)


def case_gpt2_decode(size):
    """gpt2.decode: GPT-2 small (tools/fixtures/gpt2_torch.py), random weights, batch 1: a 32-token
    prompt, then `size` greedy tokens through the preallocated KV cache, each read to Python."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "fixtures"))
    from gpt2_torch import GPT2LMHeadModel, KVCache
    torch.manual_seed(0)
    cfg = {"vocab_size": 50257, "n_positions": 1024, "n_embd": 768, "n_layer": 12, "n_head": 12}
    model = GPT2LMHeadModel(cfg).eval().to(DEV)
    prompt = torch.tensor([[(i * 131) % 50257 for i in range(32)]]).to(DEV)

    def run():
        cache = KVCache(cfg, 1, 32 + size, DEV)
        x = prompt
        for _ in range(size):
            t = model(x, cache, last_only=True)[:, -1].argmax(-1)
            int(t[0])
            x = t.view(1, 1)
    return run


CASES["gpt2.decode"] = case_gpt2_decode


def prepare(fn, min_sample_s, warmup_s, sync):
    """Warm-up, and calibration of the batch so that one sample lasts >= min_sample_s."""
    clock = time.perf_counter
    end = clock() + warmup_s
    while clock() < end:
        fn()
    sync()
    batch = 1
    while True:
        t0 = clock()
        for _ in range(batch):
            fn()
        sync()
        dt = clock() - t0
        if dt >= min_sample_s or batch > (1 << 24):
            break
        batch *= int(min_sample_s / dt * 1.2) + 1 if dt > 0 else 10
    return batch


def sample(fn, batch, settle_s, sync):
    """One sample of batch calls, after settle_s of untimed calls: seconds per call."""
    clock = time.perf_counter
    if settle_s > 0:
        end = clock() + settle_s
        while clock() < end:
            fn()
        sync()
    t0 = clock()
    for _ in range(batch):
        fn()
    sync()
    return (clock() - t0) / batch


def measure(fn, min_sample_s, warmup_s, repeats, sync):
    batch = prepare(fn, min_sample_s, warmup_s, sync)
    return batch, [sample(fn, batch, 0, sync) for _ in range(repeats)]


def answer(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def run_case(c, sync):
    name, size = c["name"], c["size"]
    make = CASES.get(name)
    if make is None:
        return {"name": name, "size": size, "error": "no PyTorch version of this case"}
    try:
        with torch.set_grad_enabled(name.endswith(".grad")):
            batch, samples = measure(make(size), c["min_sample_s"], c["warmup_s"], c["repeats"], sync)
    except Exception as e:  # noqa: BLE001 - one failing case must not lose the others
        return {"name": name, "size": size, "error": str(e).split("\n")[0]}
    return {"name": name, "size": size, "batch": batch, "median_s": statistics.median(samples),
            "best_s": min(samples), "samples": samples}


class Paired:
    """The case opened for paired samples: its function, batch and grad mode."""

    def __init__(self):
        self.fn = None

    def handle(self, c, sync):
        op = c["op"]
        try:
            if op == "open":
                self.fn = None
                name, size = c["name"], c["size"]
                make = CASES.get(name)
                if make is None:
                    return {"name": name, "size": size, "error": "no PyTorch version of this case"}
                self.grad = name.endswith(".grad")
                with torch.set_grad_enabled(self.grad):
                    fn = make(size)
                    self.batch = prepare(fn, c["min_sample_s"], c["warmup_s"], sync)
                self.fn = fn
                return {"name": name, "size": size, "batch": self.batch}
            if op == "sample":
                if self.fn is None:
                    return {"error": "no case is open"}
                with torch.set_grad_enabled(self.grad):
                    return {"sample_s": sample(self.fn, self.batch, float(c.get("settle_s") or 0), sync)}
            if op == "close":
                self.fn = None
                return {"closed": True}
            return {"error": "unknown op " + str(op)}
        except Exception as e:  # noqa: BLE001 - one failing case must not lose the others
            self.fn = None
            return {"error": str(e).split("\n")[0]}


# int8 dynamic quantization (the linear.* cases of bench/cases.js): a float32 Linear and the same
# layer through torch.ao.quantization.quantize_dynamic (qint8, the default quantized engine), on
# an input of `batch` rows; the CPU only (quantized ops have no CUDA kernels).
def case_linear(in_f, out_f, quantized):
    def make(batch):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(in_f, out_f)).eval()
        if quantized:
            model = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
        x = torch.randn(batch, in_f)

        def run():
            with torch.no_grad():
                return model(x)
        return run
    return make


CASES.update({
    f"linear.{kind}.{i}x{o}": case_linear(i, o, kind == "int8")
    for kind in ("f32", "int8") for (i, o) in ((768, 3072), (3072, 768))
})


def main():
    global DEV
    config = json.loads(sys.stdin.readline())
    DEV = config.get("device") or "cpu"
    if DEV == "cuda" and not torch.cuda.is_available():
        sys.stderr.write("torch.cuda.is_available() is False\n")
        sys.exit(3)
    sync = torch.cuda.synchronize if DEV == "cuda" else (lambda: None)
    threads = int(config.get("threads") or 0)
    if threads > 0:
        torch.set_num_threads(threads)
    hello = {"torch": torch.__version__, "threads": torch.get_num_threads(), "device": DEV,
             "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY")}
    if DEV == "cuda":
        hello["gpu"] = torch.cuda.get_device_name()
    answer(hello)
    paired = Paired()
    for line in sys.stdin:
        if line.strip():
            c = json.loads(line)
            answer(paired.handle(c, sync) if "op" in c else run_case(c, sync))


if __name__ == "__main__":
    main()

