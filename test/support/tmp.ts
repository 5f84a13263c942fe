import * as os from 'node:os';
import * as path from 'node:path';

/**
 * A path under the temporary folder of this run (`os.tmpdir()`: TMPDIR, else /tmp). Never a
 * hard-coded /tmp: the service's default workspace roots hold `os.tmpdir()`, and on macOS and in
 * many CI systems TMPDIR is another folder (test/unit/tmpdir.spec.ts keeps it so).
 */
export const tmpPath = (...parts: string[]): string => path.join(os.tmpdir(), ...parts);
