// train.d.ts - kd.train: progress bar and SVG training curves (lib/train/).

export interface ProgressBarOptions {
  /** Items expected (omit for an open-ended loop: no bar, no ETA). */
  total?: number | null;
  /** Printed first, e.g. 'epoch 1/5'. */
  label?: string;
  /** Unit of the rate (default 'it'). */
  unit?: string;
  /** Bar width in characters (default 24). */
  width?: number;
  /** Where to draw (default process.stderr). */
  stream?: { write(s: string): unknown; isTTY?: boolean };
  /** Redraw one line with '\r' (default: stream.isTTY). */
  tty?: boolean;
  /** Not a TTY: a line each time another this many percent is done (default 10). */
  everyPercent?: number;
  /** TTY: at most one redraw per this many ms (default 100). */
  intervalMs?: number;
  /** false draws nothing (default true). */
  enabled?: boolean;
}

export type Metrics = Record<string, number | string>;

/** A progress bar with count/total, percent, rate, ETA and the latest metrics. */
export declare class ProgressBar {
  constructor(options?: ProgressBarOptions);
  readonly total: number | null;
  count: number;
  metrics: Metrics;
  readonly finished: boolean;
  /** Seconds since the bar was made. */
  readonly elapsed: number;
  /** Items per second so far. */
  readonly rate: number;
  /** Seconds left at the current rate (NaN without a total). */
  readonly eta: number;
  /** Merges metrics shown after the rate. */
  set(metrics?: Metrics): this;
  /** Advances by n items (default 1); redraws when due. */
  tick(n?: number, metrics?: Metrics): this;
  tick(metrics: Metrics): this;
  /** The status line as text. */
  line(final?: boolean): string;
  /** Draws the final line (elapsed time instead of ETA) and returns it. */
  finish(metrics?: Metrics): string;
}

/** An iterable that ticks `bar` once per item and finishes it at the end of the loop. */
export interface ProgressIterable<T> extends Iterable<T>, AsyncIterable<T> {
  readonly bar: ProgressBar;
}

/** Wraps an iterable / async iterable (DataLoader, array, generator); total defaults to its length. */
export declare function progress<T>(iterable: Iterable<T> | AsyncIterable<T>, options?: ProgressBarOptions): ProgressIterable<T>;

export type SeriesInput = Record<string, ArrayLike<number | null>>
  | { name?: string; values?: ArrayLike<number | null>; points?: [number, number][]; color?: string }[];

export interface ChartOptions {
  title?: string;
  /** Default 'epoch'. */
  xLabel?: string;
  yLabel?: string;
  /** Pixels (default 480 x 320, per panel for curvesSvg). */
  width?: number;
  height?: number;
  yMin?: number;
  yMax?: number;
}

/** One line chart as an SVG document. */
export declare function lineChartSvg(series: SeriesInput, options?: ChartOptions): string;

export type EpochRecord = Record<string, number | string | null | undefined>;

export interface CurvesOptions {
  title?: string;
  /** The keys to plot (default: every numeric key but epoch, time*, lr). */
  keys?: string[];
  width?: number;
  height?: number;
}

/** Per-epoch records as an SVG: a 'loss' panel, an 'accuracy' panel (and one for other keys). */
export declare function curvesSvg(records: EpochRecord[], options?: CurvesOptions): string;
/** Writes curvesSvg(records) to file, creating its folder; returns the path. */
export declare function writeCurves(file: string, records: EpochRecord[], options?: CurvesOptions): string;
/** Records as a plain-text table with a header row. */
export declare function table(records: EpochRecord[], options?: { keys?: string[] }): string;
/** '1:02:03' / '2:03' for a number of seconds. */
export declare function formatDuration(seconds: number): string;
