// transforms.js - torchvision 0.14's ImageNet evaluation transform (transforms/_presets.py
// ImageClassification, the `weights.transforms()` of every classification model) on a raw RGB
// tensor: uint8 [3, H, W] or [N, 3, H, W] (values 0..255), as torchvision does it on tensors:
//   resize      the shorter edge to resizeSize (the longer one int(resizeSize * long / short)),
//               bilinear, align_corners false, no antialias (torchvision's default for tensors
//               in 0.14), the result rounded back to uint8
//   center crop cropSize x cropSize, top/left offsets round((size - crop) / 2) with Python's
//               round-half-to-even; zero padding first where the image is smaller than the crop
//   to float    / 255, then (x - mean) / std per channel
'use strict';

const IMAGENET_MEAN = [0.485, 0.456, 0.406];
const IMAGENET_STD = [0.229, 0.224, 0.225];

/** Python's round(): halves go to the even neighbour. */
function roundHalfEven(v) {
  const f = Math.floor(v);
  const d = v - f;
  if (d > 0.5) return f + 1;
  if (d < 0.5) return f;
  return f % 2 === 0 ? f : f + 1;
}

module.exports = function makeTransforms(kd) {
  const F = kd.nn.functional;

  /** [h, w] after resizing the shorter edge to `size` (torchvision's _compute_resized_output_size). */
  function resizedSize(h, w, size) {
    const [short, long] = w <= h ? [w, h] : [h, w];
    const newLong = Math.trunc((size * long) / short);
    return w <= h ? [newLong, size] : [size, newLong];
  }

  /** uint8 image(s) -> uint8 image(s), shorter edge resized to `size`. */
  function resize(img, size, { antialias = false } = {}) {
    const [h, w] = img.shape.slice(-2);
    const out = resizedSize(h, w, size);
    return kd.tidy(() => {
      const batched = img.dim() === 4 ? img : img.unsqueeze(0);
      const x = F.interpolate(batched.to('float32'), { size: out, mode: 'bilinear', alignCorners: false, antialias });
      const y = x.round().to(img.dtype);
      return img.dim() === 4 ? y : y.squeeze(0);
    });
  }

  /** The centre cropSize x cropSize window (a view where no padding is needed). */
  function centerCrop(img, cropSize) {
    let [h, w] = img.shape.slice(-2);
    if (cropSize > h || cropSize > w) {
      const pads = [ // left, right, top, bottom, as torchvision.transforms.functional.center_crop
        cropSize > w ? Math.floor((cropSize - w) / 2) : 0, cropSize > w ? Math.floor((cropSize - w + 1) / 2) : 0,
        cropSize > h ? Math.floor((cropSize - h) / 2) : 0, cropSize > h ? Math.floor((cropSize - h + 1) / 2) : 0,
      ];
      const padded = F.pad(img, pads);
      [h, w] = padded.shape.slice(-2);
      const top = roundHalfEven((h - cropSize) / 2);
      const left = roundHalfEven((w - cropSize) / 2);
      const out = padded.narrow(-2, top, cropSize).narrow(-1, left, cropSize).contiguous();
      padded.dispose();
      return out;
    }
    const top = roundHalfEven((h - cropSize) / 2);
    const left = roundHalfEven((w - cropSize) / 2);
    return img.narrow(-2, top, cropSize).narrow(-1, left, cropSize);
  }

  /** float image(s) in [0, 1] -> (x - mean) / std per channel (dim -3). */
  function normalize(x, mean = IMAGENET_MEAN, std = IMAGENET_STD) {
    return kd.tidy(() => {
      const shape = [3, 1, 1];
      return x.sub(kd.tensor(mean, { dtype: x.dtype, device: x.device }).reshape(shape))
        .div(kd.tensor(std, { dtype: x.dtype, device: x.device }).reshape(shape));
    });
  }

  /**
   * torchvision's ImageClassification(cropSize, resizeSize): uint8 [3, H, W] or [N, 3, H, W] ->
   * float32 [.., 3, cropSize, cropSize], ready for the model (unsqueeze(0) a single image).
   */
  function imageClassification(img, { cropSize = 224, resizeSize = 256, mean = IMAGENET_MEAN, std = IMAGENET_STD } = {}) {
    if (!(img instanceof kd.Tensor)) throw new TypeError('imageClassification: expected a Tensor image');
    if ((img.dim() !== 3 && img.dim() !== 4) || img.shape[img.dim() - 3] !== 3) {
      throw new RangeError(`imageClassification: expected an RGB image [3, H, W] or [N, 3, H, W], got [${img.shape.join(', ')}]`);
    }
    if (img.dtype !== 'uint8') throw new TypeError(`imageClassification: expected a uint8 image (0..255), got ${img.dtype}`);
    return kd.tidy(() => normalize(centerCrop(resize(img, resizeSize), cropSize).to('float32').div(255), mean, std));
  }

  return { imageClassification, resize, centerCrop, normalize, resizedSize, IMAGENET_MEAN, IMAGENET_STD };
};
module.exports.roundHalfEven = roundHalfEven;
