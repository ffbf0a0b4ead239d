// library.d.ts - kd.library and kd.ops: ops defined at run time (lib/library.js, docs/EXTENDING.md).
import type { Tensor, autograd } from './index';
import * as dataNamespace from './data';

/** An op defined with kd.library.define, called with positional arguments in schema order,
 * optionally followed by an object naming any of them. */
export type LibraryOp = (...args: any[]) => Tensor | Tensor[];

/** A cast policy of autocast: lower precision, float32, or the widest floating input dtype. */
export type AutocastPolicyName = 'lower' | 'fp32' | 'promote' | 'none';

export declare namespace library {
  /** Defines an op from a PyTorch schema ('mylib::scale(Tensor x, float alpha=1.0) -> Tensor');
   * returns its callable, also kd.ops.mylib.scale. */
  function define(schema: string): LibraryOp;
  /** Registers the implementation of an op for 'cpu', 'cuda' or both; it returns the op's
   * outputs (a Tensor, or an array per the schema's returns) and runs synchronously. */
  function impl(name: string, device: 'cpu' | 'cuda' | readonly ('cpu' | 'cuda')[], fn: (...args: any[]) => Tensor | readonly Tensor[]): void;
  /** Registers the backward of an op: one gradient (or null) per input, written with kd ops. */
  function registerAutograd(name: string,
    backward: (ctx: autograd.FunctionCtx, ...gradOutputs: Tensor[]) => Tensor | null | readonly (Tensor | null | readonly (Tensor | null)[])[],
    options?: { setupContext?: (ctx: autograd.FunctionCtx, inputs: any[], output: Tensor | Tensor[]) => void }): void;
  /** Sets the op's autocast policy, for both device types or per device type. */
  function registerAutocast(name: string, policy: AutocastPolicyName | { cpu?: AutocastPolicyName; cuda?: AutocastPolicyName }): void;
}

/** The ops defined with kd.library, by namespace: kd.ops.mylib.scale(x, 2). */
export declare const ops: { [namespace: string]: { [name: string]: LibraryOp } };

/** The result of utils.cppExtension.load. */
export interface CppExtension {
  readonly name: string;
  /** The shared object (in the cache dir). */
  readonly path: string;
  /** Whether this load compiled it (false: found in the cache). */
  readonly built: boolean;
  /** The ops it defined, by name (also ops.<namespace>.<name>). */
  readonly ops: { readonly [name: string]: LibraryOp };
}

export declare namespace utils {
  /** kd.data under torch.utils.data's path. */
  export import data = dataNamespace;
  /** C extensions written against include/kindling.h (docs/EXTENDING.md). */
  namespace cppExtension {
    /** What to compile: C sources (the system C compiler, with extraCflags) and .cu CUDA sources
     * (nvcc for kindling's GPU architectures, or with KINDLING_CUDA=emulate the host C++ compiler
     * for the emulated GPU; with extraCudaCflags), linked into one shared object. */
    interface Options {
      name: string;
      sources: readonly string[];
      extraCflags?: readonly string[];
      extraCudaCflags?: readonly string[];
      verbose?: boolean;
    }
    /** Compiles the sources (cached by content hash under $KINDLING_EXTENSIONS_DIR or
     * ~/.cache/kindling/extensions), loads the shared object and registers its ops. */
    function load(options: Options): CppExtension;
    /** Compiles the sources into the cache (or finds them there) without loading them. */
    function build(options: Options): { readonly path: string; readonly built: boolean };
  }
}
