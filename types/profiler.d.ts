// types/profiler.d.ts - TypeScript declarations of kd.profiler (lib/profiler/), PyTorch's
// torch.profiler: profile, recordFunction, key averages, the table and the Chrome trace.
// Re-exported by ./index.d.ts as `profiler`.

/** What a profile records: 'cpu' (ops, autograd nodes, user ranges) and 'cuda' (CUDA ops' GPU time and kernels). */
export type ProfilerActivityName = 'cpu' | 'cuda';
export declare const ProfilerActivity: { readonly CPU: 'cpu'; readonly CUDA: 'cuda' };

export interface ProfileOptions {
  /** Default ['cpu']. */
  activities?: ProfilerActivityName[];
  /** Record each op's input shapes (default false). */
  recordShapes?: boolean;
  /** Record the JS stack of each op called from JS (not of the ops inside composite ops). */
  withStack?: boolean;
}

/** A kernel an op launched (through KD_LAUNCH; library calls such as cuBLAS are not listed). */
export interface ProfilerKernel {
  /** As written at the launch: "kd_cu_binary_kernel<T, int32_t>" */
  name: string;
  device: number;
  stream: number;
  /** On the profile's clock, aligned with the CPU at the device's first event; null if unknown. */
  startUs: number | null;
  /** To the next event on its stream; null if unknown. */
  durationUs: number | null;
}

/** One recorded op, autograd node ('backward') or user range ('user'); times in microseconds. */
export interface ProfilerEvent {
  id: number;
  /** "aten::add", "mylib::scale", "autograd::engine::evaluate_function: AddBackward0", a range's name */
  name: string;
  kind: 'op' | 'backward' | 'user';
  threadId: number;
  startUs: number;
  endUs: number;
  cpuTimeTotal: number;
  selfCpuTimeTotal: number;
  cudaTimeTotal: number;
  selfCudaTimeTotal: number;
  /** The enclosing event's id, -1 at the top. */
  parent: number;
  children: number[];
  /** With recordShapes: one entry per argument, [] for non-tensors. */
  inputShapes: number[][] | null;
  /** With withStack, the JS frames (outside kindling) that called an op from JS; else null. */
  stack: string[] | null;
  /** With 'cuda' activity, a CUDA op's GPU time (events around it on the current stream); else null. */
  cudaUs: number | null;
  kernels: ProfilerKernel[];
}

/** One row of key averages (times in microseconds). */
export interface ProfilerKeyAverage {
  key: string;
  count: number;
  cpuTimeTotal: number;
  selfCpuTimeTotal: number;
  cpuTime: number;
  cudaTimeTotal: number;
  selfCudaTimeTotal: number;
  cudaTime: number;
  inputShapes: number[][] | null;
  /** With groupByStackN: the first frames of the rows' JS stack. */
  stack: string[] | null;
}

export type ProfilerSortBy =
  | 'self_cpu_time_total' | 'cpu_time_total' | 'cpu_time'
  | 'self_cuda_time_total' | 'cuda_time_total' | 'cuda_time' | 'count';

export interface ProfilerTableOptions {
  sortBy?: ProfilerSortBy;
  /** At most this many rows (default all). */
  rowLimit?: number;
}

export interface KeyAverages extends Array<ProfilerKeyAverage> {
  /** PyTorch's profiler table as text. */
  table(opts?: ProfilerTableOptions): string;
}

export declare class Profile {
  /** Events lost to a failed allocation while recording (the ops themselves ran). */
  readonly dropped: number;
  start(): this;
  stop(): this;
  events(): ProfilerEvent[];
  /** groupByStackN: with withStack, rows also split by the first N frames (a Source Location column). */
  keyAverages(opts?: { groupByInputShape?: boolean; groupByStackN?: number }): KeyAverages;
  /** keyAverages(opts).table(opts). */
  table(opts?: ProfilerTableOptions & { groupByInputShape?: boolean; groupByStackN?: number }): string;
  /** Writes Chrome trace JSON (chrome://tracing, Perfetto) to path; returns path. A file that
   * cannot be written is a KindlingError with code KD_IO_ERROR (Node's error as its cause). */
  exportChromeTrace(path: string | URL | Buffer): string;
}

/**
 * Profiles fn (sync or async: the profile covers until its Promise settles), or, without fn,
 * returns a Profile to start() and stop(). The profile stops even when fn throws.
 * @example
 * const prof = kd.profiler.profile({ recordShapes: true }, () => model.forward(x));
 * console.log(prof.keyAverages().table({ sortBy: 'cpu_time_total', rowLimit: 10 }));
 */
export declare function profile(opts?: ProfileOptions): Profile;
export declare function profile(opts: ProfileOptions | undefined, fn: (prof: Profile) => Promise<unknown>): Promise<Profile>;
export declare function profile(opts: ProfileOptions | undefined, fn: (prof: Profile) => unknown): Profile;

/** Runs fn (sync or async) as a named user range of the running profile; returns fn's result. */
export declare function recordFunction<T>(name: string, fn: () => T): T;
/** Opens a named user range; end() (or `using`) closes it. */
export declare function recordFunction(name: string): { end(): void; [Symbol.dispose](): void };
