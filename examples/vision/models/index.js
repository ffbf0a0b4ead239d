// index.js - torchvision 0.14's classification models, written with kindling's kd.nn, loading
// torchvision's state dicts by name (see README.md beside this file):
//   const kd = require('kindling');
//   const vision = require('./examples/vision/models')(kd);
//   const model = vision.resnet18().eval();
//   model.loadStateDict(kd.loadSync('resnet18.safetensors'));
//   vision.fuseConvBn(model);                      // optional, for inference: BatchNorm folded into convs
//   const x = vision.transforms.imageClassification(rgbUint8).unsqueeze(0);
//   const logits = kd.inferenceMode(() => model(x));
// Builders take torchvision's constructor options, camelCased (numClasses, widthMult, ...).
'use strict';

const makeLayers = require('./layers');

module.exports = function vision(kd) {
  const layers = makeLayers(kd);
  const resnet = require('./resnet')(kd, layers);
  const mobilenetV2 = require('./mobilenet_v2')(kd, layers);
  const mobilenetV3 = require('./mobilenet_v3')(kd, layers);
  const efficientnet = require('./efficientnet')(kd, layers);
  const vit = require('./vit')(kd, layers);
  const transforms = require('./transforms')(kd);
  const { fuseConvBn } = require('./fuse')(kd);
  const builders = {
    resnet18: resnet.resnet18,
    resnet34: resnet.resnet34,
    resnet50: resnet.resnet50,
    resnet101: resnet.resnet101,
    resnet152: resnet.resnet152,
    mobilenet_v2: mobilenetV2.mobilenetV2,
    mobilenet_v3_small: mobilenetV3.mobilenetV3Small,
    mobilenet_v3_large: mobilenetV3.mobilenetV3Large,
  };
  for (const v of ['b0', 'b1', 'b2', 'b3', 'b4', 'b5', 'b6', 'b7']) builders[`efficientnet_${v}`] = efficientnet[`efficientnet${v.toUpperCase()}`];
  Object.assign(builders, { vit_b_16: vit.vitB16, vit_b_32: vit.vitB32, vit_l_16: vit.vitL16, vit_l_32: vit.vitL32 });

  /** Builds a model by torchvision's name ('resnet18', 'mobilenet_v2', ...). */
  function getModel(name, options) {
    if (!Object.prototype.hasOwnProperty.call(builders, name)) {
      throw new RangeError(`Unknown model ${JSON.stringify(name)}; known: ${Object.keys(builders).join(', ')}`);
    }
    return builders[name](options);
  }

  return {
    ...resnet,
    ...mobilenetV2,
    ...mobilenetV3,
    ...efficientnet,
    ...vit,
    layers,
    transforms,
    fuseConvBn,
    getModel,
    modelNames: Object.keys(builders),
  };
};
