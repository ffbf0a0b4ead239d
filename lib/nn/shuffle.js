// shuffle.js - kd.nn.functional.pixelShuffle, pixelUnshuffle and channelShuffle and the modules
// PixelShuffle, PixelUnshuffle and ChannelShuffle (PyTorch 1.13's arguments and errors): reshapes
// and permutes, so they are views plus one copy, differentiable on every device.
'use strict';

const { KindlingError } = require('../errors');

module.exports = function installShuffle(kd, nn, { Module, parseArgs }) {
  const F = kd.nn.functional;
  const invalid = (msg) => new KindlingError(msg, 'KD_INVALID_ARGUMENT');
  const shapeError = (msg) => new KindlingError(msg, 'KD_SHAPE_MISMATCH');

  /** The checks both pixel shuffles make; the leading dims and (C, H, W) of input. */
  function pixelDims(name, what, input, r) {
    if (input.ndim < 3) throw shapeError(`${name} expects input to have at least 3 dimensions, but got input with ${input.ndim} dimension(s)`);
    if (!Number.isInteger(r) || r <= 0) throw invalid(`${name} expects a positive ${what}, but got ${r}`);
    const s = input.shape;
    const [c, h, w] = s.slice(-3);
    return { lead: s.slice(0, -3), c, h, w };
  }

  /** (*, C r^2, H, W) -> (*, C, H r, W r). pixelShuffle(input, upscaleFactor). */
  F.pixelShuffle = function pixelShuffle(input, upscaleFactor) {
    const r = upscaleFactor;
    const { lead, c, h, w } = pixelDims('pixel_shuffle', 'upscale_factor', input, r);
    if (c % (r * r) !== 0) {
      throw shapeError(`pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of upscale_factor, but input.size(-3)=${c} is not divisible by ${r * r}`);
    }
    const oc = c / (r * r);
    const n = lead.length;
    const perm = [...lead.keys(), n, n + 3, n + 1, n + 4, n + 2];
    return input.reshape([...lead, oc, r, r, h, w]).permute(perm).reshape([...lead, oc, h * r, w * r]);
  };

  /** (*, C, H r, W r) -> (*, C r^2, H, W). pixelUnshuffle(input, downscaleFactor). */
  F.pixelUnshuffle = function pixelUnshuffle(input, downscaleFactor) {
    const r = downscaleFactor;
    const { lead, c, h, w } = pixelDims('pixel_unshuffle', 'downscale_factor', input, r);
    if (h % r !== 0) throw shapeError(`pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)=${h} is not divisible by ${r}`);
    if (w % r !== 0) throw shapeError(`pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)=${w} is not divisible by ${r}`);
    const n = lead.length;
    const perm = [...lead.keys(), n, n + 2, n + 4, n + 1, n + 3];
    return input.reshape([...lead, c, h / r, r, w / r, r]).permute(perm).reshape([...lead, c * r * r, h / r, w / r]);
  };

  /** Channels (dim 1) split into groups and interleaved. channelShuffle(input, groups). */
  F.channelShuffle = function channelShuffle(input, groups) {
    if (input.ndim <= 2) throw shapeError(`channel_shuffle expects input to have at least 3 dimensions, but got input with ${input.ndim} dimension(s)`);
    if (!Number.isInteger(groups) || groups <= 0) throw invalid(`Number of groups to divide channels in must be positive. Value of groups:${groups}`);
    const [b, c, ...rest] = input.shape;
    if (c % groups !== 0) throw shapeError(`Number of channels must be divisible by groups. Got ${c} channels and ${groups} groups.`);
    return input.reshape([b, groups, c / groups, ...rest]).transpose(1, 2).reshape(input.shape);
  };

  /** PyTorch's native_channel_shuffle: the same shuffle. */
  F.nativeChannelShuffle = F.channelShuffle;

  function make(name, fn, arg, reprName) {
    return {
      [name]: class extends Module {
        constructor(...args) {
          super();
          this[arg] = parseArgs(`${name}()`, args, [arg])[arg];
        }
        forward(input) { return F[fn](input, this[arg]); }
        extraRepr() { return `${reprName}=${this[arg]}`; }
      },
    }[name];
  }
  const PixelShuffle = make('PixelShuffle', 'pixelShuffle', 'upscaleFactor', 'upscale_factor');
  const PixelUnshuffle = make('PixelUnshuffle', 'pixelUnshuffle', 'downscaleFactor', 'downscale_factor');
  const ChannelShuffle = make('ChannelShuffle', 'channelShuffle', 'groups', 'groups');
  Object.assign(nn, { PixelShuffle, PixelUnshuffle, ChannelShuffle });
};
