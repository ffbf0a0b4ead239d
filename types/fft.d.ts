// fft.d.ts - kd.fft's frequency and shift helpers (lib/fft.js).
import type { Tensor, DTypeLike, DeviceLike } from './index';

export interface FftFreqOptions {
  /** A floating dtype (default: the default dtype). */
  dtype?: DTypeLike | null;
  device?: DeviceLike | null;
  requiresGrad?: boolean;
}

export declare namespace fft {
  /** The sample frequencies of an n-point FFT with spacing d (torch.fft.fftfreq). */
  function fftfreq(n: number, d?: number | FftFreqOptions, options?: FftFreqOptions): Tensor;
  /** The non-negative sample frequencies of an n-point rfft (torch.fft.rfftfreq). */
  function rfftfreq(n: number, d?: number | FftFreqOptions, options?: FftFreqOptions): Tensor;
  /** Rolls each given dim (all when null) by floor(size / 2): the zero frequency to the centre. */
  function fftshift(input: Tensor, dim?: number | readonly number[] | null): Tensor;
  /** The inverse of fftshift. */
  function ifftshift(input: Tensor, dim?: number | readonly number[] | null): Tensor;
}
