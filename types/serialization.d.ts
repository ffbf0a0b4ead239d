// serialization.d.ts - safetensors save/load and checkpoints (lib/serialization.js).
import type { Tensor, DeviceLike } from './index';

/** Tensors keyed by name; nested objects, Maps, arrays and objects with stateDict() flatten to dotted keys. */
export type TensorDict = { [key: string]: Tensor | TensorDict | TensorDict[] | Tensor[] } | Map<string, unknown>;
export type PathLike = string | URL | Buffer;

export interface SaveOptions {
  /** String metadata stored in the header's __metadata__. */
  metadata?: Record<string, string>;
}
export interface LoadOptions {
  /** Where the tensors go (default 'cpu'). */
  device?: DeviceLike;
}

/** Writes tensors to `path` in the safetensors format. */
export declare function save(tensors: TensorDict | object, path: PathLike, options?: SaveOptions): Promise<void>;
export declare function saveSync(tensors: TensorDict | object, path: PathLike, options?: SaveOptions): void;
/**
 * The tensors of a safetensors file (mapped, checked, copied once in chunks: tensors of any size,
 * at any offset), as {name: Tensor} in file order. Every name is an own key, '__proto__' and
 * 'constructor' included.
 */
export declare function load(path: PathLike, options?: LoadOptions): Promise<Record<string, Tensor>>;
export declare function loadSync(path: PathLike, options?: LoadOptions): Record<string, Tensor>;

/**
 * Writes {model, optimizer, epoch, ...} (modules and optimizers are saved as their state dicts):
 * tensors in safetensors, the rest as JSON in __metadata__. The state comes first, as in save().
 * @example await kd.saveCheckpoint({ model, optimizer, epoch }, 'ckpt.safetensors');
 */
export declare function saveCheckpoint(state: Record<string, unknown>, path: PathLike): Promise<void>;
/** @deprecated pass the state first: saveCheckpoint(state, path). */
export declare function saveCheckpoint(path: PathLike, state: Record<string, unknown>): Promise<void>;
export declare function saveCheckpointSync(state: Record<string, unknown>, path: PathLike): void;
/** @deprecated pass the state first: saveCheckpointSync(state, path). */
export declare function saveCheckpointSync(path: PathLike, state: Record<string, unknown>): void;
/** The object saveCheckpoint wrote, with tensors on options.device. */
export declare function loadCheckpoint(path: PathLike, options?: LoadOptions): Promise<Record<string, any>>;
export declare function loadCheckpointSync(path: PathLike, options?: LoadOptions): Record<string, any>;

/** Lower-level safetensors helpers. */
export interface SafetensorsNamespace {
  /** The safetensors bytes of a tensor dict. */
  serialize(tensors: TensorDict | object, options?: SaveOptions): Buffer;
  /** The tensors held in safetensors bytes. */
  deserialize(bytes: Uint8Array, options?: LoadOptions): Record<string, Tensor>;
  /** A file's __metadata__ ({} when absent); reads only the header. */
  loadMetadata(path: PathLike): Record<string, string>;
  /** A nested state dict as {dottedKey: Tensor}. */
  flatten(tensors: TensorDict | object): Record<string, Tensor>;
}
export declare const safetensors: SafetensorsNamespace;
