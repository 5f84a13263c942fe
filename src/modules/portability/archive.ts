import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { create } from 'tar';

/**
 * A `.tar.gz` of the package, streamed: the files are written once to a private temporary folder
 * and the `tar` library packs and gzips them as the client reads (memory stays bounded by the
 * stream's buffers, not the package size). The folder is removed when the stream ends or fails.
 */
export async function packageArchive(rootPath: string, files: Record<string, string>): Promise<Readable> {
  const dir = await mkdtemp(join(tmpdir(), 'company-export-'));
  try {
    const root = join(dir, rootPath);
    const made = new Set<string>();
    for (const [path, content] of Object.entries(files)) {
      const full = join(root, path);
      const parent = dirname(full);
      if (!made.has(parent)) {
        await mkdir(parent, { recursive: true });
        made.add(parent);
      }
      await writeFile(full, content, { mode: 0o600 });
    }
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  const stream = create({ gzip: true, cwd: dir, portable: true }, [rootPath]) as unknown as Readable;
  let cleaned = false;
  const cleanup = () => {
    if (cleaned) return;
    cleaned = true;
    void rm(dir, { recursive: true, force: true });
  };
  stream.on('end', cleanup);
  stream.on('error', cleanup);
  stream.on('close', cleanup);
  return stream;
}
