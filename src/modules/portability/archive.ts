import { Readable } from 'node:stream';
import { createGzip } from 'node:zlib';
import { Header, Pax } from 'tar';

const BLOCK = 512;

/** The tar records of one file: header (plus a PAX header for long paths), content, padding. */
function fileRecords(path: string, content: string, mtime: Date): Buffer[] {
  const body = Buffer.from(content, 'utf8');
  const header = new Header({ path, mode: 0o644, size: body.length, mtime, type: 'File', uname: '', gname: '' });
  const out: Buffer[] = [];
  if (header.encode()) out.push(new Pax({ path, mtime }).encode());
  const block = header.block!;
  out.push(block, body);
  const pad = (BLOCK - (body.length % BLOCK)) % BLOCK;
  if (pad) out.push(Buffer.alloc(pad));
  return out;
}

/**
 * A `.tar.gz` of the package under the folder `rootPath/`, streamed: tar records (headers made
 * by the `tar` library) are produced file by file as the gzip stream is read, so memory holds a
 * few files at a time, never the whole archive.
 */
export function packageArchive(rootPath: string, files: Record<string, string>): Readable {
  const mtime = new Date();
  const paths = Object.keys(files).sort();
  function* records(): Generator<Buffer> {
    for (const p of paths) yield* fileRecords(`${rootPath}/${p}`, files[p], mtime);
    yield Buffer.alloc(BLOCK * 2);
  }
  return Readable.from(records(), { objectMode: false }).pipe(createGzip());
}
