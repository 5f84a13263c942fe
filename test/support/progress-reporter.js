// A jest reporter beside the default one: while `npm test` runs, a line at least every 20 s with
// the elapsed time, the files and tests done so far and the files running (with how long each has
// run), so a long run is never silent (a part of several specs, or a coding-agent CLI spec, can
// take minutes). In a terminal the default reporter already shows a live status, so the lines
// are printed only when stderr is not a terminal (CI, a pipe, a log file) or with TEST_PROGRESS=1;
// TEST_PROGRESS=0 turns them off.
'use strict';
const path = require('node:path');

const EVERY_MS = Number(process.env.TEST_PROGRESS_EVERY_MS) || 20_000;

const clock = (ms) => {
  const s = Math.round(ms / 1000);
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
};

class ProgressReporter {
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
    const wanted = process.env.TEST_PROGRESS;
    this.enabled = wanted === '1' || (wanted !== '0' && !process.stderr.isTTY);
    this.running = new Map();
    this.cases = new Map();
    this.done = { files: 0, passed: 0, failed: 0, skipped: 0 };
    this.total = 0;
    this.started = Date.now();
    this.timer = null;
  }

  name(testPath) {
    return path.relative(this.rootDir, testPath).replace(/\.(e2e-part|e2e-spec|spec)\.ts$/, '');
  }

  line(text) {
    if (this.enabled) process.stderr.write(`[${clock(Date.now() - this.started)}] ${text}\n`);
  }

  status() {
    const { files, skipped } = this.done;
    // finished files, and the tests finished so far in the files still running
    let { passed, failed } = this.done;
    for (const c of this.cases.values()) {
      passed += c.passed;
      failed += c.failed;
    }
    const running = [...this.running].map(([p, since]) => `${this.name(p)} (${clock(Date.now() - since)})`).join(', ');
    return `${files}/${this.total} files, ${passed} tests passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}${running ? `; running: ${running}` : ''}`;
  }

  onRunStart(results) {
    this.started = Date.now();
    this.total = results.numTotalTestSuites;
    this.line(`jest: ${this.total} test files`);
    if (this.enabled) {
      this.timer = setInterval(() => this.line(this.status()), EVERY_MS);
      this.timer.unref();
    }
  }

  onTestFileStart(test) {
    this.running.set(test.path, Date.now());
    this.cases.set(test.path, { passed: 0, failed: 0 });
  }

  onTestCaseResult(test, result) {
    const c = this.cases.get(test.path);
    if (c && result.status === 'passed') c.passed++;
    else if (c && result.status === 'failed') c.failed++;
  }

  onTestFileResult(test, result) {
    this.running.delete(test.path);
    this.cases.delete(test.path);
    this.done.files++;
    this.done.passed += result.numPassingTests;
    this.done.failed += result.numFailingTests + (result.testExecError ? 1 : 0);
    this.done.skipped += result.numPendingTests + result.numTodoTests;
  }

  onRunComplete() {
    if (this.timer) clearInterval(this.timer);
    this.line(`jest: done, ${this.status()}`);
  }

  getLastError() {
    return undefined;
  }
}

module.exports = ProgressReporter;
