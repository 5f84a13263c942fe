import { Presets, SingleBar } from 'cli-progress';
import { CliContext } from './cli-context';

/** A progress display of long work: a bar in a terminal, nothing otherwise (logs and pipes stay clean). */
export interface Progress {
  /** `value` of `total` (set or change `total` when it becomes known) */
  update(value: number, total?: number, label?: string): void;
  stop(): void;
}

const NONE: Progress = { update: () => undefined, stop: () => undefined };

/**
 * A bar on stderr while stdout is a terminal (and no --json was asked for). `unit` names what is
 * counted; with no total yet, the bar shows the count and the elapsed time.
 */
export function progressBar(ctx: CliContext, label: string, unit: string, total = 0): Progress {
  if (!ctx.interactive) return NONE;
  const bar = new SingleBar(
    {
      format: `{label} [{bar}] {percentage}% | {value}/{total} ${unit} | {duration_formatted}`,
      hideCursor: true,
      clearOnComplete: false,
      stopOnComplete: false,
      etaBuffer: 20,
      stream: process.stderr,
    },
    Presets.shades_classic,
  );
  bar.start(total, 0, { label });
  let stopped = false;
  return {
    update(value, newTotal, newLabel) {
      if (stopped) return;
      if (newTotal !== undefined && newTotal !== bar.getTotal()) bar.setTotal(newTotal);
      bar.update(value, newLabel ? { label: newLabel } : undefined);
    },
    stop() {
      if (stopped) return;
      stopped = true;
      bar.stop();
    },
  };
}

/** Work without a measure (one API call): an elapsed-time ticker in a terminal, nothing otherwise. */
export async function withSpinner<T>(ctx: CliContext, label: string, work: Promise<T>): Promise<T> {
  if (!ctx.interactive) return work;
  const started = Date.now();
  const frames = ['|', '/', '-', '\\'];
  let i = 0;
  const draw = () => process.stderr.write(`\r${frames[i++ % frames.length]} ${label} ${Math.round((Date.now() - started) / 1000)}s `);
  draw();
  const timer = setInterval(draw, 250);
  try {
    return await work;
  } finally {
    clearInterval(timer);
    process.stderr.write(`\r${' '.repeat(label.length + 12)}\r`);
  }
}
