import * as fs from 'node:fs';

/**
 * Follows a JSON-lines file a CLI appends to while it runs (Codex's rollout, the Gemini CLI's chat
 * record): each read hands over the complete lines written since the last one. A watch (inotify)
 * reads as soon as the CLI writes, so usage the CLI records there per model call reaches the meter
 * within that call; the runtime also reads on each stream line and on a slow timer.
 */
export class SessionFileTail {
  private watcher: fs.FSWatcher | null = null;

  constructor(
    readonly file: string,
    /** bytes already there that are not this run's (a resumed session's earlier turns) */
    private offset: number,
    private readonly onLine: (line: string) => void,
  ) {}

  /** Hands the complete lines written since the last read to `onLine`; false when the file is not readable. */
  read(): boolean {
    let text: string;
    try {
      const fd = fs.openSync(this.file, 'r');
      try {
        const size = fs.fstatSync(fd).size;
        if (size <= this.offset) return true;
        const buf = Buffer.alloc(size - this.offset);
        fs.readSync(fd, buf, 0, buf.length, this.offset);
        text = buf.toString('utf8');
      } finally {
        fs.closeSync(fd);
      }
    } catch {
      return false;
    }
    const end = text.lastIndexOf('\n');
    if (end < 0) return true;
    this.offset += Buffer.byteLength(text.slice(0, end + 1));
    for (const line of text.slice(0, end).split('\n')) if (line) this.onLine(line);
    return true;
  }

  /** Calls `changed` whenever the file is written (until close). */
  watch(changed: () => void): void {
    if (this.watcher) return;
    try {
      this.watcher = fs.watch(this.file, { persistent: false }, () => changed());
      this.watcher.on('error', () => this.close());
    } catch {
      /* no inotify here: the stream lines and the timer still read it */
    }
  }

  close(): void {
    this.watcher?.close();
    this.watcher = null;
  }
}

/** The size of `file` (0 when it does not exist). */
export const sizeOf = (file: string | null): number => {
  if (!file) return 0;
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
};
