#!/usr/bin/env node
// `npm run check:board-ui`: drives the published board UI in headless Chromium against the built
// service, as a person would: onboarding → connect a model (an Anthropic key; the loopback fake's
// base URL is the operator's SERVICE_AI_BASE_URLS) → new agent → Claude Code → save → a new task
// assigned to it → the run succeeds and its page shows the transcript, usage and cost → the agent's
// configuration page changes an env var and saves. A screenshot per step; exit 1 when a step fails.
// Not part of `npm test` (it needs Chromium and fetches the UI). See docs/development.md.
//
//   npm run build && npm run check:board-ui
//   env: UI_DIST (an unpacked ui-dist/), CHROMIUM (default /usr/bin/chromium), PLAYWRIGHT_CORE (a folder
//   with node_modules/playwright-core), CHECK_BOARD_UI_DIR (scratch folder, default $TMPDIR/aos-check-board-ui)
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { boardUi, fakeAnthropic, log, playwright, startService } = require('./check-board-ui/setup');
const { serveBoardUi } = require('./check-board-ui/serve');

const scratch = path.resolve(process.env.CHECK_BOARD_UI_DIR ?? path.join(os.tmpdir(), 'aos-check-board-ui'));
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
const ERROR_BOUNDARY = /Something went wrong while (rendering this page|running the app)/i;
const KEY = 'sk-ant-board-ui-check';

async function main() {
  fs.mkdirSync(scratch, { recursive: true });
  const ui = boardUi(scratch);
  const { chromium } = playwright(scratch);
  const runDir = path.join(scratch, 'runs', new Date().toISOString().replace(/[:.]/g, '-'));
  const shots = path.join(runDir, 'screenshots');
  fs.mkdirSync(path.join(runDir, 'data'), { recursive: true });
  fs.mkdirSync(shots, { recursive: true });
  const fake = await fakeAnthropic();
  const service = await startService(path.join(runDir, 'data'), {
    // the operator's endpoint for Anthropic (the UI's "Connect a model" asks only for the key) and where the CLI lives
    SERVICE_AI_BASE_URLS: `anthropic=${fake.url}`,
    SERVICE_CLI_PATH: path.dirname(fake.claudeBinary),
  });
  const served = await serveBoardUi(ui, service.url);
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
  log(`UI ${served.url} → service ${service.url}; fake Anthropic ${fake.url}; screenshots in ${shots}`);
  const results = [];
  try {
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    const failedCalls = [];
    page.on('response', (r) => {
      const u = new URL(r.url());
      if (u.pathname.startsWith('/api/') && r.status() >= 400) failedCalls.push(`${r.request().method()} ${u.pathname} ${r.status()}`);
    });
    const ctx = { page, api: service.url, ui: served.url, fake, state: {} };
    let n = 0;
    for (const [name, run] of STEPS) {
      const file = path.join(shots, `${String(++n).padStart(2, '0')}-${name}.png`);
      failedCalls.length = 0;
      const result = { step: name, ok: true, screenshot: file };
      // a picture in the middle of a step (the form filled in, before it is sent)
      ctx.snap = (label) => page.screenshot({ path: file.replace(/\.png$/, `-${label}.png`) }).catch(() => undefined);
      try {
        await run(ctx);
        const text = await page.evaluate(() => document.body.innerText);
        if (ERROR_BOUNDARY.test(text)) throw new Error('the page shows the error boundary');
      } catch (err) {
        Object.assign(result, { ok: false, error: String(err.message ?? err).split('\n')[0] });
      }
      await page.waitForTimeout(300);
      await page.screenshot({ path: file }).catch(() => undefined);
      result.failedCalls = [...new Set(failedCalls)];
      results.push(result);
      log(
        `${result.ok ? 'ok  ' : 'FAIL'} ${name}${result.ok ? '' : `: ${result.error}`}${result.failedCalls.length ? ` (calls answering >= 400: ${result.failedCalls.join(', ')})` : ''}`,
      );
    }
  } finally {
    await browser.close().catch(() => undefined);
    await served.close();
    await service.stop();
    await fake.close();
  }
  fs.writeFileSync(path.join(runDir, 'summary.json'), JSON.stringify({ ui, results }, null, 2));
  const failed = results.filter((r) => !r.ok);
  log(`${results.length - failed.length}/${results.length} steps passed; screenshots and summary.json in ${runDir}`);
  process.exitCode = failed.length ? 1 : 0;
}

const api = async (ctx, p) => {
  const res = await fetch(`${ctx.api}/api${p}`);
  if (!res.ok) throw new Error(`GET ${p}: ${res.status}`);
  return res.json();
};
const waitText = (page, text, timeout = 30_000) => page.getByText(text).first().waitFor({ timeout });
const until = async (what, fn, timeout = 120_000) => {
  for (const end = Date.now() + timeout; Date.now() < end; await new Promise((r) => setTimeout(r, 1000))) {
    const v = await fn();
    if (v) return v;
  }
  throw new Error(`timed out waiting for ${what}`);
};

/** The steps, in order; each leaves the page as its screenshot should show it. */
const STEPS = [
  [
    'onboarding-organization',
    async ({ page, ui, snap }) => {
      await page.goto(`${ui}/`);
      await page.getByPlaceholder('e.g. Northwind Labs').fill('Board Check Labs');
      await snap('filled');
      await page.getByRole('button', { name: /Continue/ }).click();
      await waitText(page, 'Create your first agent');
    },
  ],
  [
    'onboarding-first-agent',
    async ({ page, snap }) => {
      await page.getByPlaceholder('e.g. Chief of staff').fill('Ada');
      await snap('filled');
      await page.getByRole('button', { name: /Next/ }).click();
      await waitText(page, 'Paperclip works with your subscription or API keys.');
    },
  ],
  [
    'connect-a-model',
    async ({ page, snap }) => {
      await snap('choices');
      const apiKey = page.getByRole('button', { name: 'Use API key instead' });
      if (await apiKey.isVisible()) await apiKey.click();
      await page.locator('button', { hasText: 'Claude' }).first().click();
      await page.getByPlaceholder('Enter API key here').fill(KEY);
      await snap('key');
      await page.getByRole('button', { name: 'Connect', exact: true }).click();
      await waitText(page, 'is ready to work', 120_000);
    },
  ],
  [
    'onboarding-first-task',
    async ({ page, state }) => {
      await page.getByRole('button', { name: 'Get started' }).click();
      await page.waitForURL(/\/issues\//, { timeout: 30_000 });
      state.prefix = new URL(page.url()).pathname.split('/')[1];
      await page.waitForTimeout(3000);
    },
  ],
  [
    'new-agent-claude-code',
    async ({ page, ui, state, snap }) => {
      await page.goto(`${ui}/${state.prefix}/agents/all`);
      await page.getByRole('button', { name: 'New Agent' }).click();
      await page.getByPlaceholder('e.g. Darnold').fill('Cody');
      await page.getByRole('button', { name: 'Choose adapter' }).click();
      await page.locator('[role=dialog] label', { hasText: 'Claude Code' }).first().click();
      await snap('adapter');
      await page.getByRole('button', { name: 'Configure agent' }).click();
      await waitText(page, 'Connect Cody to Claude.');
      await page.locator('main button', { hasText: 'Claude' }).first().click();
      await waitText(page, 'Choose a saved API key or enter a new one');
      await page.waitForTimeout(800);
      await snap('connect');
      await page.getByRole('button', { name: 'Use saved API key' }).click();
      await waitText(page, 'Configure your agent', 120_000);
    },
  ],
  [
    'new-agent-test',
    async ({ page }) => {
      await page.getByRole('button', { name: 'Run test' }).click();
      await waitText(page, 'Connection successful', 120_000);
      await page.getByText('Test details').click();
      await waitText(page, 'would run');
      await waitText(page, 'answered a test prompt');
      await page.getByText('Test details').scrollIntoViewIfNeeded();
    },
  ],
  [
    'new-agent-saved',
    async ({ page, state, ...ctx }) => {
      await page.getByRole('button', { name: 'Finish setup' }).click();
      await waitText(page, 'Your agent is ready', 60_000);
      const [company] = await api(ctx, '/companies');
      state.companyId = company.id;
      const cody = (await api(ctx, `/companies/${company.id}/agents`)).find((a) => a.name === 'Cody');
      if (!cody) throw new Error('the agent Cody was not created');
      state.agent = cody;
      const env = cody.adapterConfig.env ?? {};
      if (env.ANTHROPIC_API_KEY?.type !== 'secret_ref' || env.ANTHROPIC_BASE_URL !== ctx.fake.url)
        throw new Error(`Cody's env lacks the connection's key reference and base URL: ${JSON.stringify(env)}`);
    },
  ],
  [
    'new-task-assigned',
    async ({ page, ui, state, snap }) => {
      await page.getByRole('button', { name: /Assign Cody a Task/ }).click();
      await page.getByPlaceholder('Task title').fill('Say hello from the board UI check');
      await snap('filled');
      await page.getByRole('button', { name: 'Create Task' }).click();
      await page.getByPlaceholder('Task title').waitFor({ state: 'detached', timeout: 30_000 });
      await page.goto(`${ui}/${state.prefix}/issues/all`);
      await waitText(page, 'Say hello from the board UI check');
    },
  ],
  [
    'run-page',
    async ({ page, ui, state, ...ctx }) => {
      const run = await until('a finished run of Cody', async () => {
        const runs = await api(ctx, `/companies/${state.companyId}/heartbeat-runs?agentId=${state.agent.id}`);
        return runs.find((r) => ['succeeded', 'failed', 'cancelled', 'timed_out'].includes(r.status));
      });
      if (run.status !== 'succeeded') throw new Error(`the run ended ${run.status}: ${run.errorCode} ${run.error}`);
      await page.goto(`${ui}/${state.prefix}/agents/${state.agent.urlKey}/runs/${run.id}`);
      await waitText(page, 'succeeded');
      await waitText(page, 'Cost');
      await waitText(page, /\$0\.\d+/);
      await waitText(page, 'Input');
      await page.waitForTimeout(3000);
      const text = await page.evaluate(() => document.querySelector('main')?.innerText ?? '');
      if (/No log events/.test(text)) throw new Error('the run page shows no run events ("No log events")');
      if (/No persisted transcript|Transcript \(0\)/.test(text)) throw new Error('the run page shows no transcript ("Transcript (0)")');
      if (!text.includes('Hello from the board UI check')) throw new Error('the transcript does not show the model’s answer');
    },
  ],
  [
    'configuration-env-saved',
    async ({ page, ui, state, snap, ...ctx }) => {
      await page.goto(`${ui}/${state.prefix}/agents/${state.agent.urlKey}/runtime`);
      await waitText(page, 'Environment variables');
      await page.getByRole('button', { name: 'Add variable' }).click();
      const names = page.getByLabel('Variable name');
      await names.nth((await names.count()) - 1).fill('CHECK_MODE');
      const values = page.getByLabel('Variable value');
      await values.nth((await values.count()) - 1).fill('board-ui');
      await page.getByText('Environment variables').scrollIntoViewIfNeeded();
      await snap('edited');
      await page.getByRole('button', { name: 'Save changes' }).click();
      await until(
        'the saved env',
        async () => (await api(ctx, `/agents/${state.agent.id}`)).adapterConfig.env?.CHECK_MODE === 'board-ui',
        30_000,
      );
      await page.reload();
      await waitText(page, 'Environment variables');
      await page.getByText('Environment variables').scrollIntoViewIfNeeded();
      const shown = await page.getByLabel('Variable value').evaluateAll((els) => els.map((e) => e.value));
      if (!shown.includes('board-ui')) throw new Error(`the configuration page does not show the saved variable (${shown.join(', ')})`);
    },
  ],
];

main().catch((err) => {
  log(`failed: ${err.stack ?? err}`);
  process.exit(1);
});
