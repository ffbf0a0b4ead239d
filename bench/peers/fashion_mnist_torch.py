#!/usr/bin/env python3
# fashion_mnist_torch.py - PyTorch's twin of examples/fashion-mnist/train.js, for bench/epoch.js:
# the same data (the IDX files, normalised with the same mean and std), the same models, batch size,
# shuffling each epoch, Adam with a cosine learning rate, cross-entropy, running loss/accuracy kept on
# the device, and the test split evaluated in batches of 1000 after each epoch. Prints one JSON line
# per epoch: {"epoch", "seconds", "cpuSeconds", "trainLoss", "trainAcc", "testAcc"}.
#
#   python3 bench/peers/fashion_mnist_torch.py --model cnn --epochs 1 --batch-size 64 --threads 2
import argparse
import gzip
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_peer import fashion_model  # noqa: E402  the models of examples/fashion-mnist/models.js

MEAN, STD = 0.2860, 0.3530


def read_idx(path):
    for name in (path + '.gz', path):
        if os.path.exists(name):
            with (gzip.open if name.endswith('.gz') else open)(name, 'rb') as f:
                buf = f.read()
            ndim = buf[3]
            dims = [int.from_bytes(buf[4 + 4 * i:8 + 4 * i], 'big') for i in range(ndim)]
            return np.frombuffer(buf, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)
    sys.exit(f'Fashion-MNIST not found: {path}.gz is missing (apt-get install dataset-fashion-mnist)')


def split(folder, images, labels):
    x = read_idx(os.path.join(folder, images)).astype(np.float32)
    x = torch.from_numpy(x * np.float32(1 / (255 * STD)) - np.float32(MEAN / STD)).view(-1, 1, 28, 28)
    y = torch.from_numpy(read_idx(os.path.join(folder, labels)).astype(np.int64))
    return x, y


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--model', default='cnn', choices=['mlp', 'cnn'])
    ap.add_argument('--epochs', type=int, default=1)
    ap.add_argument('--batch-size', type=int, default=64)
    ap.add_argument('--lr', type=float, default=1e-3)
    ap.add_argument('--threads', type=int, default=os.cpu_count())
    ap.add_argument('--device', default='cpu')
    ap.add_argument('--seed', type=int, default=0)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    folder = os.environ.get('FASHION_MNIST_DIR', '/usr/share/datasets/fashion-mnist')
    xtr, ytr = split(folder, 'train-images-idx3-ubyte', 'train-labels-idx1-ubyte')
    xte, yte = split(folder, 't10k-images-idx3-ubyte', 't10k-labels-idx1-ubyte')
    dev = torch.device(a.device)
    net = fashion_model(a.model).to(dev)
    opt = torch.optim.Adam(net.parameters(), lr=a.lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, a.epochs)
    loss_fn = nn.CrossEntropyLoss()
    gen = torch.Generator().manual_seed(a.seed)
    n = xtr.shape[0]
    for epoch in range(1, a.epochs + 1):
        start, cpu0 = time.perf_counter(), time.process_time()
        loss_sum = torch.zeros((), device=dev)
        correct = torch.zeros((), dtype=torch.int64, device=dev)
        perm = torch.randperm(n, generator=gen)
        for i in range(0, n, a.batch_size):
            idx = perm[i:i + a.batch_size]
            x, y = xtr[idx].to(dev), ytr[idx].to(dev)
            logits = net(x)
            loss = loss_fn(logits, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            with torch.no_grad():
                loss_sum.add_(loss.detach(), alpha=y.shape[0])
                correct.add_(logits.argmax(1).eq(y).sum())
        train_loss, train_acc = loss_sum.item() / n, correct.item() / n
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu0
        sched.step()
        net.eval()
        right = 0
        with torch.no_grad():
            for i in range(0, xte.shape[0], 1000):
                right += net(xte[i:i + 1000].to(dev)).argmax(1).eq(yte[i:i + 1000].to(dev)).sum().item()
        net.train()
        print(json.dumps({'epoch': epoch, 'seconds': seconds, 'cpuSeconds': cpu, 'trainLoss': train_loss,
                          'trainAcc': train_acc, 'testAcc': right / xte.shape[0]}), flush=True)


if __name__ == '__main__':
    main()
