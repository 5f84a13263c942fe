import * as fs from 'node:fs';
import * as path from 'node:path';

function readVersion(): string {
  // src/version.ts under jest, dist/src/version.js when built
  for (const rel of ['../package.json', '../../package.json']) {
    const p = path.join(__dirname, rel);
    if (fs.existsSync(p)) return (JSON.parse(fs.readFileSync(p, 'utf8')) as { version: string }).version;
  }
  return '0.0.0';
}

export const VERSION = readVersion();
