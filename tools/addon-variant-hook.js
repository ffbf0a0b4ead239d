// addon-variant-hook.js - preloaded (node --require, through NODE_OPTIONS so child processes get
// it too) by tools/test-emulator-asan.js and tools/coverage-cuda.js: when lib/index.js loads
// build/Release/kindling.node, the addon at $KINDLING_ADDON_VARIANT (an instrumented build from
// tools/addon-variant.js) is loaded instead. Any other .node file loads as usual.
'use strict';
const Module = require('node:module');
const path = require('node:path');

const variant = process.env.KINDLING_ADDON_VARIANT;
if (variant) {
  const normal = path.join(__dirname, '..', 'build', 'Release', 'kindling.node');
  const loadNative = Module._extensions['.node'];
  Module._extensions['.node'] = function loadAddonVariant(module, filename) {
    return loadNative.call(this, module, filename === normal ? variant : filename);
  };
}
