// own_keys.js - objects built from keys that come from files and state dicts.
//
// Note [Keys from files]
// Tensor names, checkpoint keys and state-dict keys come from files or from users' objects:
// '__proto__' assigned with obj[key] = v would set the object's prototype instead of adding a
// key (and JSON.stringify would then drop it), and obj[key] reads find inherited members
// ('constructor', 'hasOwnProperty') where the key is missing. Objects built from such keys get
// them with setOwn (an own, enumerable data property, as JSON.parse makes) and are read with
// getOwn. The objects stay plain objects ({} with Object.prototype), as PyTorch's dicts are
// indexed by name: out['__proto__'] and out.constructor are the tensors of those names.
'use strict';

/** Sets obj's own property key to value, whatever the key: an own property is assigned (as
 * obj[key] = value does), a new one is defined as an enumerable, writable data property. */
function setOwn(obj, key, value) {
  if (Object.prototype.hasOwnProperty.call(obj, key)) obj[key] = value;
  else Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

/** obj's own property key, or undefined (never an inherited member). */
function getOwn(obj, key) {
  return Object.prototype.hasOwnProperty.call(obj, key) ? obj[key] : undefined;
}

module.exports = { setOwn, getOwn };
