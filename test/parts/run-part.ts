import * as fs from 'node:fs';
import * as path from 'node:path';
const layout = require('./layout') as { PARTS: number; specName(file: string): string; parts(): string[][] };

/**
 * Loads the specs of the part this file is (`part-<n>.e2e-part.ts`, see layout.js), each inside a
 * describe block named after it: its beforeAll/afterAll hooks wrap its own tests only.
 */
export function runPart(partFile: string): void {
  const n = Number(/part-(\d+)\.e2e-part\.ts$/.exec(partFile)?.[1]);
  if (!(n >= 1 && n <= layout.PARTS)) throw new Error(`${partFile}: not a part of 1..${layout.PARTS}`);
  for (const spec of layout.parts()[n - 1]) {
    if (fs.readFileSync(spec, 'utf8').includes('jest.setTimeout('))
      throw new Error(
        `${path.basename(spec)} sets its own timeout, which would hold for its whole part: list it in SOLO (test/parts/layout.js)`,
      );
    describe(layout.specName(spec), () => {
      require(spec);
    });
  }
}
