import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * `<data dir>/listening.json`: where the service of a data directory listens, written by the
 * service once it listens and removed when it stops. The operator CLI reads it to talk to the
 * instance of the data directory it is given (SERVICE_DATA_DIR), not to whatever answers on the
 * default port, and `aos doctor` says when PORT/HOST point somewhere else.
 */
export interface ListeningRecord {
  pid: number;
  /** a URL that reaches the service from this host (a wildcard bind as loopback) */
  url: string;
  startedAt: string;
}

const FILE = 'listening.json';

/** The data directory the environment names, as the configuration resolves it (without loading it). */
export const dataDirOf = (env: NodeJS.ProcessEnv): string =>
  path.resolve(env.SERVICE_DATA_DIR?.trim() || path.join(os.homedir(), '.service'));

/** A URL this host reaches a bound address at. */
export function localUrlOf(address: string, port: number): string {
  const host = address === '0.0.0.0' ? '127.0.0.1' : address === '::' ? '::1' : address;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

export function writeListening(dataDir: string, url: string): void {
  const record: ListeningRecord = { pid: process.pid, url, startedAt: new Date().toISOString() };
  const tmp = path.join(dataDir, `${FILE}.${process.pid}`);
  fs.writeFileSync(tmp, JSON.stringify(record) + '\n', { mode: 0o600 });
  fs.renameSync(tmp, path.join(dataDir, FILE));
}

/** Removes the record if it is this process's (another instance of the same data directory may have written its own). */
export function removeListening(dataDir: string): void {
  const file = path.join(dataDir, FILE);
  try {
    if ((JSON.parse(fs.readFileSync(file, 'utf8')) as ListeningRecord).pid === process.pid) fs.rmSync(file, { force: true });
  } catch {
    /* none, or not readable: nothing to remove */
  }
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** The running service of the data directory, or null (none recorded, or its process is gone). */
export function liveListening(dataDir: string): ListeningRecord | null {
  try {
    const r = JSON.parse(fs.readFileSync(path.join(dataDir, FILE), 'utf8')) as ListeningRecord;
    return Number.isInteger(r.pid) && typeof r.url === 'string' && alive(r.pid) ? r : null;
  } catch {
    return null;
  }
}
