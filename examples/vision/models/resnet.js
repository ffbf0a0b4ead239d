// resnet.js - torchvision 0.14's ResNet (torchvision/models/resnet.py) in kindling: BasicBlock
// (ResNet-18/34) and Bottleneck (ResNet-50/101/152; stride on the 3x3 conv, "ResNet v1.5"),
// with torchvision's module names, so model.loadStateDict(kd.loadSync('resnet18.safetensors'))
// takes a checkpoint converted from torchvision's .pth as it is.
// One option beyond torchvision's: `width`, the channels of layer1 (64 in torchvision; layers
// 2-4 double it), used for small test instances of the same architecture.
'use strict';

module.exports = function makeResNet(kd, { Chain, runChain, disposeAfter }) {
  const { nn } = kd;
  const conv3x3 = (i, o, stride = 1) => new nn.Conv2d(i, o, 3, { stride, padding: 1, bias: false });
  const conv1x1 = (i, o, stride = 1) => new nn.Conv2d(i, o, 1, { stride, bias: false });

  /** out + identity, then relu; frees out (and the downsampled identity) as it goes. */
  function addRelu(out, identity, x) {
    out.add_(identity);
    if (identity !== x) identity.dispose();
    return disposeAfter(out, (t) => t.relu());
  }

  class BasicBlock extends nn.Module {
    constructor(inplanes, planes, stride = 1, downsample = null) {
      super();
      this.conv1 = conv3x3(inplanes, planes, stride);
      this.bn1 = new nn.BatchNorm2d(planes);
      this.relu = new nn.ReLU();
      this.conv2 = conv3x3(planes, planes);
      this.bn2 = new nn.BatchNorm2d(planes);
      if (downsample) this.downsample = downsample;
      this.stride = stride;
    }
    forward(x) {
      const out = runChain([this.conv1, this.bn1, this.relu, this.conv2, this.bn2], x);
      return addRelu(out, this.downsample ? this.downsample(x) : x, x);
    }
  }
  BasicBlock.expansion = 1;

  class Bottleneck extends nn.Module {
    constructor(inplanes, planes, stride = 1, downsample = null) {
      super();
      const width = planes; // groups 1, width_per_group 64
      this.conv1 = conv1x1(inplanes, width);
      this.bn1 = new nn.BatchNorm2d(width);
      this.conv2 = conv3x3(width, width, stride);
      this.bn2 = new nn.BatchNorm2d(width);
      this.conv3 = conv1x1(width, planes * Bottleneck.expansion);
      this.bn3 = new nn.BatchNorm2d(planes * Bottleneck.expansion);
      this.relu = new nn.ReLU();
      if (downsample) this.downsample = downsample;
      this.stride = stride;
    }
    forward(x) {
      const out = runChain([this.conv1, this.bn1, this.relu, this.conv2, this.bn2, this.relu, this.conv3, this.bn3], x);
      return addRelu(out, this.downsample ? this.downsample(x) : x, x);
    }
  }
  Bottleneck.expansion = 4;

  class ResNet extends nn.Module {
    /**
     * block: BasicBlock or Bottleneck; layers: blocks per stage, e.g. [2, 2, 2, 2].
     * options: numClasses (1000), width (64: channels of layer1).
     */
    constructor(block, layers, { numClasses = 1000, width = 64 } = {}) {
      super();
      this.inplanes = width;
      this.conv1 = new nn.Conv2d(3, width, 7, { stride: 2, padding: 3, bias: false });
      this.bn1 = new nn.BatchNorm2d(width);
      this.relu = new nn.ReLU();
      this.maxpool = new nn.MaxPool2d(3, { stride: 2, padding: 1 });
      this.layer1 = this._makeLayer(block, width, layers[0]);
      this.layer2 = this._makeLayer(block, width * 2, layers[1], 2);
      this.layer3 = this._makeLayer(block, width * 4, layers[2], 2);
      this.layer4 = this._makeLayer(block, width * 8, layers[3], 2);
      this.avgpool = new nn.AdaptiveAvgPool2d([1, 1]);
      this.fc = new nn.Linear(width * 8 * block.expansion, numClasses);
    }
    _makeLayer(block, planes, blocks, stride = 1) {
      let downsample = null;
      if (stride !== 1 || this.inplanes !== planes * block.expansion) {
        downsample = new Chain(conv1x1(this.inplanes, planes * block.expansion, stride), new nn.BatchNorm2d(planes * block.expansion));
      }
      const list = [new block(this.inplanes, planes, stride, downsample)];
      this.inplanes = planes * block.expansion;
      for (let i = 1; i < blocks; i++) list.push(new block(this.inplanes, planes));
      return new Chain(...list);
    }
    forward(x) {
      const f = runChain([this.conv1, this.bn1, this.relu, this.maxpool, this.layer1, this.layer2, this.layer3, this.layer4, this.avgpool], x);
      return disposeAfter(disposeAfter(f, (t) => t.flatten(1)), (t) => this.fc(t));
    }
  }

  return {
    ResNet,
    BasicBlock,
    Bottleneck,
    resnet18: (options) => new ResNet(BasicBlock, [2, 2, 2, 2], options),
    resnet34: (options) => new ResNet(BasicBlock, [3, 4, 6, 3], options),
    resnet50: (options) => new ResNet(Bottleneck, [3, 4, 6, 3], options),
    resnet101: (options) => new ResNet(Bottleneck, [3, 4, 23, 3], options),
    resnet152: (options) => new ResNet(Bottleneck, [3, 8, 36, 3], options),
  };
};
