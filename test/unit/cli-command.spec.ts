import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { cliSearchPath, isPackageScriptBin, resolveCliCommand } from '../../src/modules/adapters/runtimes/cli-command';

describe('which coding CLI binary a bare name runs', () => {
  let dir: string;
  const bin = (sub: string) => {
    const file = path.join(dir, sub, 'claude');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, '#!/bin/sh\n', { mode: 0o755 });
    return file;
  };
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-resolve-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('leaves out the folders npm adds for package scripts', () => {
    expect(isPackageScriptBin('/srv/app/node_modules/.bin')).toBe(true);
    expect(isPackageScriptBin('/usr/lib/node_modules/npm/node_modules/@npmcli/run-script/lib/node-gyp-bin')).toBe(true);
    expect(isPackageScriptBin('/usr/local/bin')).toBe(false);
    expect(cliSearchPath(['/opt/cli/bin'], '/app/node_modules/.bin:/usr/local/bin:/opt/cli/bin')).toEqual([
      '/opt/cli/bin',
      '/usr/local/bin',
    ]);
  });

  it('SERVICE_CLI_PATH first, then PATH; a path is taken as it is', () => {
    const checkout = bin('node_modules/.bin');
    const global = bin('usr/bin');
    const configured = bin('opt');
    const PATH = `${path.dirname(checkout)}:${path.dirname(global)}`;
    expect(resolveCliCommand('claude', [], PATH).path).toBe(global);
    expect(resolveCliCommand('claude', [path.dirname(configured)], PATH).path).toBe(configured);
    expect(resolveCliCommand('claude', [], path.dirname(checkout))).toMatchObject({ path: null, searched: [] });
    expect(resolveCliCommand(checkout, [], '').path).toBe(checkout);
  });
});
