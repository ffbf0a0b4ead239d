"""pytorch_examples_conv.py - the originals' training steps in PyTorch, for
bench/pytorch_examples_conv.js (same programs, sizes and output). The models and the loop bodies
are the parity fixtures' copies of pytorch/examples (tools/fixtures/pytorch_examples/); VGG-16 has
torchvision's random init (the weights do not change the time).

  OMP_WAIT_POLICY=PASSIVE /usr/bin/python3 bench/pytorch_examples_conv.py [--only dcgan] [--repeat 3] [--threads 1]
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tools', 'fixtures', 'pytorch_examples'))


def timed(name, step, repeat):
    step()
    ms = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        step()
        ms.append((time.perf_counter() - t0) * 1000)
    print(json.dumps({"name": name, "medianMs": round(statistics.median(ms)), "ms": [round(m) for m in ms],
                      "threads": torch.get_num_threads()}))


def dcgan(repeat):
    import dcgan as d
    d.nz, d.ngf, d.ndf, d.nc = 100, 64, 64, 3
    netG, netD = d.Generator(1), d.Discriminator(1)
    netG.apply(d.weights_init)
    netD.apply(d.weights_init)
    criterion = torch.nn.BCELoss()
    optD = torch.optim.Adam(netD.parameters(), lr=0.0002, betas=(0.5, 0.999))
    optG = torch.optim.Adam(netG.parameters(), lr=0.0002, betas=(0.5, 0.999))
    real = torch.rand(64, 3, 64, 64) * 2 - 1
    noise = torch.randn(64, 100, 1, 1)

    def step():
        netD.zero_grad()
        label = torch.full((64,), 1, dtype=real.dtype)
        output = netD(real)
        errD_real = criterion(output, label)
        errD_real.backward()
        output.mean().item()
        fake = netG(noise)
        label.fill_(0)
        output = netD(fake.detach())
        errD_fake = criterion(output, label)
        errD_fake.backward()
        output.mean().item()
        (errD_real + errD_fake).item()
        optD.step()
        netG.zero_grad()
        label.fill_(1)
        output = netD(fake)
        errG = criterion(output, label)
        errG.backward()
        output.mean().item()
        optG.step()
        errG.item()
    timed('dcgan', step, repeat)


def super_resolution(repeat):
    from super_resolution import Net
    model = Net(3)
    criterion = torch.nn.MSELoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    input, target = torch.rand(64, 1, 85, 85), torch.rand(64, 1, 255, 255)

    def step():
        optimizer.zero_grad()
        loss = criterion(model(input), target)
        loss.item()
        loss.backward()
        optimizer.step()
    timed('super_resolution', step, repeat)


def fast_neural_style(repeat):
    import fast_neural_style as f
    f.deterministic_vgg_ = lambda features: None  # torchvision's random init: the time is the same
    transformer = f.TransformerNet()
    vgg = f.Vgg16(requires_grad=False)
    optimizer = torch.optim.Adam(transformer.parameters(), 1e-3)
    mse_loss = torch.nn.MSELoss()
    with torch.no_grad():
        gram_style = [f.gram_matrix(y) for y in vgg(f.normalize_batch(torch.rand(4, 3, 256, 256) * 255))]
    x0 = torch.rand(4, 3, 256, 256) * 255

    def step():
        x = x0.clone()
        optimizer.zero_grad()
        y = f.normalize_batch(transformer(x))
        x = f.normalize_batch(x)
        features_y, features_x = vgg(y), vgg(x)
        content_loss = 1e5 * mse_loss(features_y.relu2_2, features_x.relu2_2)
        style_loss = 0.
        for ft_y, gm_s in zip(features_y, gram_style):
            style_loss += mse_loss(f.gram_matrix(ft_y), gm_s[:4, :, :])
        style_loss *= 1e10
        (content_loss + style_loss).backward()
        optimizer.step()
        content_loss.item()
        style_loss.item()
    timed('fast_neural_style', step, repeat)


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--only')
    p.add_argument('--repeat', type=int, default=3)
    p.add_argument('--threads', type=int, default=1)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    for name, fn in [('dcgan', dcgan), ('super_resolution', super_resolution), ('fast_neural_style', fast_neural_style)]:
        if not a.only or a.only == name:
            fn(a.repeat)


if __name__ == '__main__':
    main()
