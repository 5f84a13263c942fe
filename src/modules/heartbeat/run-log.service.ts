import * as fs from 'node:fs';
import * as path from 'node:path';
import { Injectable } from '@nestjs/common';
import { redactionForms, StreamRedactor } from '../../common/process/stream-redactor';
import { AppConfig } from '../../config/app-config';
import type { LogStream } from '../adapters/run.types';

/** buffered log lines go to the file after this long at most, or once this many bytes wait */
const FLUSH_MS = 50;
const FLUSH_BYTES = 256 * 1024;

/** Where a run's redacted output also goes (the live stream). */
export interface RunLogSink {
  write(stream: LogStream, chunk: string): void;
  close(): void;
}

/**
 * One run's log: NDJSON lines `{ ts, stream, chunk }` appended to
 * `<dataDir>/run-logs/<companyId>/<runId>.ndjson`. Known secret values (resolved env secrets, the
 * run token), raw and encoded, are replaced before anything reaches disk, also when a value is split
 * over several writes (each stream holds back a tail that could start one until the next write or
 * close). Past the size cap one `truncated` line is written and the rest dropped.
 */
export class RunLogWriter {
  private fd: number | null = null;
  private bytes = 0;
  private truncated = false;
  private readonly forms: string[];
  private readonly redactors = new Map<LogStream, StreamRedactor>();
  private pending: string[] = [];
  private pendingBytes = 0;
  private flushTimer: NodeJS.Timeout | null = null;

  constructor(
    readonly relativePath: string,
    private readonly absolutePath: string,
    private readonly maxBytes: number,
    secrets: string[],
    private readonly sink?: RunLogSink,
  ) {
    this.forms = redactionForms(secrets);
  }

  get size(): number {
    return this.bytes;
  }

  write(stream: LogStream, chunk: string): void {
    if (this.truncated || chunk.length === 0) return;
    let redactor = this.redactors.get(stream);
    if (!redactor) this.redactors.set(stream, (redactor = new StreamRedactor(this.forms)));
    this.appendChunk(stream, redactor.push(chunk));
  }

  private appendChunk(stream: LogStream, text: string): void {
    if (this.truncated || text.length === 0) return;
    const line = JSON.stringify({ ts: new Date().toISOString(), stream, chunk: text }) + '\n';
    const len = Buffer.byteLength(line);
    if (this.bytes + len > this.maxBytes) {
      this.truncated = true;
      this.append(
        JSON.stringify({
          ts: new Date().toISOString(),
          stream: 'system',
          chunk: `log truncated at ${this.maxBytes} bytes\n`,
          truncated: true,
        }) + '\n',
      );
      return;
    }
    this.append(line, len);
    this.sink?.write(stream, text);
  }

  close(): void {
    for (const [stream, redactor] of this.redactors) this.appendChunk(stream, redactor.flush());
    this.redactors.clear();
    this.sink?.close();
    this.flushFile();
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
  }

  /**
   * Lines are joined and written at most every FLUSH_MS (or at FLUSH_BYTES): a CLI printing one
   * event line per write must not cost a write call per line. `bytes` counts what is appended.
   */
  private append(line: string, len = Buffer.byteLength(line)): void {
    this.pending.push(line);
    this.pendingBytes += len;
    this.bytes += len;
    if (this.pendingBytes >= FLUSH_BYTES) this.flushFile();
    else if (!this.flushTimer) {
      this.flushTimer = setTimeout(() => this.flushFile(), FLUSH_MS);
      this.flushTimer.unref();
    }
  }

  private flushFile(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    if (this.pending.length === 0) return;
    const text = this.pending.length === 1 ? this.pending[0] : this.pending.join('');
    this.pending = [];
    this.pendingBytes = 0;
    try {
      if (this.fd === null) {
        fs.mkdirSync(path.dirname(this.absolutePath), { recursive: true });
        this.fd = fs.openSync(this.absolutePath, 'a', 0o600);
      }
      fs.writeSync(this.fd, text);
    } catch {
      // a full disk must not kill the run; the log just stops growing
      this.truncated = true;
    }
  }
}

@Injectable()
export class RunLogService {
  constructor(private readonly config: AppConfig) {}

  relativePath(companyId: string, runId: string): string {
    return path.join('run-logs', companyId, `${runId}.ndjson`);
  }

  open(companyId: string, runId: string, secrets: string[], sink?: RunLogSink): RunLogWriter {
    const rel = this.relativePath(companyId, runId);
    return new RunLogWriter(rel, this.absolute(rel), this.config.heartbeat.runLogMaxBytes, secrets, sink);
  }

  /** Up to `limit` bytes from `offset`; an empty read at the end. Logs live on the instance that ran the run. */
  read(relPath: string | null, offset: number, limit: number): { content: string; size: number; nextOffset: number } {
    if (!relPath) return { content: '', size: 0, nextOffset: offset };
    const abs = this.absolute(relPath);
    let fd: number;
    try {
      fd = fs.openSync(abs, 'r');
    } catch {
      return { content: '', size: 0, nextOffset: offset };
    }
    try {
      const size = fs.fstatSync(fd).size;
      const start = Math.min(offset, size);
      const buf = Buffer.alloc(Math.max(0, Math.min(limit, size - start)));
      let n = buf.length ? fs.readSync(fd, buf, 0, buf.length, start) : 0;
      // hand out whole NDJSON lines when the window holds at least one, so no UTF-8 sequence is split
      const lastNewline = buf.subarray(0, n).lastIndexOf(0x0a);
      if (lastNewline >= 0) n = lastNewline + 1;
      return { content: buf.subarray(0, n).toString('utf8'), size, nextOffset: start + n };
    } finally {
      fs.closeSync(fd);
    }
  }

  private absolute(rel: string): string {
    const abs = path.resolve(this.config.dataDir, rel);
    // paths come from our own rows, but never read outside the data directory
    if (!abs.startsWith(path.resolve(this.config.dataDir) + path.sep)) throw new Error('log path outside the data directory');
    return abs;
  }
}
