// esm.mts - the ESM entry's typings: default, namespace and named imports.
import kd from 'kindling';
import * as ns from 'kindling';
import { tensor, zeros, tidy, Tensor } from 'kindling';

const a: Tensor = tensor([1, 2]);
const b: Tensor = tidy(() => zeros(2).add(a));
const c: Tensor = kd.ones(2).add(ns.ones(2));
export { b, c };

// names beyond the ops and tensor creation, as the CommonJS exports have them
import { noGrad, enableGrad, inferenceMode, isGradEnabled, isInferenceModeEnabled, setGradEnabled, backends, var as variance } from 'kindling';
const d: Tensor = noGrad(() => enableGrad(() => inferenceMode(() => variance(tensor([1, 2, 3])))));
const modes: boolean[] = [isGradEnabled(), isInferenceModeEnabled()];
setGradEnabled(true);
export { d, modes, backends };
