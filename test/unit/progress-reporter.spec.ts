import * as path from 'node:path';

/**
 * `npm test` is never silent for long (issue 46: minutes without output): when not in a terminal,
 * test/support/progress-reporter.js prints a line at least every 20 s with the files and tests done
 * and the files running, and one at the end.
 */
const ProgressReporter = require('../support/progress-reporter.js') as new (config: { rootDir: string }) => {
  onRunStart(r: { numTotalTestSuites: number }): void;
  onTestFileStart(t: { path: string }): void;
  onTestCaseResult(t: { path: string }, r: { status: string }): void;
  onTestFileResult(t: { path: string }, r: Record<string, unknown>): void;
  onRunComplete(): void;
};

describe('the progress reporter of npm test', () => {
  const root = path.join(__dirname, '..', '..');
  const file = (name: string) => ({ path: path.join(root, 'test', 'e2e', `${name}.e2e-spec.ts`) });
  let lines: string[];
  let write: jest.SpyInstance;
  const saved = process.env.TEST_PROGRESS;

  beforeEach(() => {
    jest.useFakeTimers();
    lines = [];
    write = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
  });
  afterEach(() => {
    write.mockRestore();
    jest.useRealTimers();
    if (saved === undefined) delete process.env.TEST_PROGRESS;
    else process.env.TEST_PROGRESS = saved;
  });

  it('prints where the run is every 20 s while files run, tests of running files included, and a last line', () => {
    process.env.TEST_PROGRESS = '1';
    const r = new ProgressReporter({ rootDir: root });
    r.onRunStart({ numTotalTestSuites: 3 });
    r.onTestFileStart(file('companies'));
    r.onTestFileStart(file('runtime-claude'));
    r.onTestCaseResult(file('runtime-claude'), { status: 'passed' });
    expect(lines).toEqual(['[0s] jest: 3 test files\n']);
    jest.advanceTimersByTime(20_000);
    expect(lines[1]).toBe('[20s] 0/3 files, 1 tests passed, 0 failed; running: test/e2e/companies (20s), test/e2e/runtime-claude (20s)\n');
    r.onTestFileResult(file('companies'), { numPassingTests: 4, numFailingTests: 0, numPendingTests: 0, numTodoTests: 0 });
    jest.advanceTimersByTime(40_000);
    expect(lines).toHaveLength(4);
    expect(lines[3]).toBe('[1m00s] 1/3 files, 5 tests passed, 0 failed; running: test/e2e/runtime-claude (1m00s)\n');
    r.onRunComplete();
    expect(lines[4]).toMatch(/^\[1m00s\] jest: done, 1\/3 files, 5 tests passed/);
    jest.advanceTimersByTime(60_000);
    expect(lines).toHaveLength(5);
  });

  it('is quiet with TEST_PROGRESS=0 (a terminal has the default reporter’s live status)', () => {
    process.env.TEST_PROGRESS = '0';
    const r = new ProgressReporter({ rootDir: root });
    r.onRunStart({ numTotalTestSuites: 1 });
    jest.advanceTimersByTime(60_000);
    r.onRunComplete();
    expect(lines).toEqual([]);
  });
});
