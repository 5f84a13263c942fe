'use strict';
// Daily digest: counts activity per company (events) and POSTs a digest on a cron job.
const { serve } = require('./runtime');

let counts = {};

serve({
  'events.deliver': async ({ event }) => {
    const c = (counts[event.companyId] = counts[event.companyId] || {});
    c[event.action] = (c[event.action] || 0) + 1;
    return { ok: true };
  },
  'jobs.run': async ({ jobKey, scheduledFor, trigger }, host) => {
    if (jobKey !== 'post-digest') throw new Error(`unknown job ${jobKey}`);
    const config = await host.call('config.get');
    if (!config.webhookUrl) throw new Error('webhookUrl is not configured');
    const digest = { plugin: 'daily-digest', trigger, scheduledFor, companies: counts };
    const headers = { 'content-type': 'application/json' };
    if (config.authToken) headers.authorization = `Bearer ${config.authToken}`;
    const res = await host.call('http.fetch', { url: config.webhookUrl, method: 'POST', headers, body: digest });
    if (res.status >= 300) throw new Error(`webhook answered ${res.status}`);
    counts = {};
    return { posted: true, status: res.status };
  },
  'config.test': async ({ config }) => {
    try {
      new URL(config.webhookUrl);
      return { ok: true };
    } catch {
      return { ok: false, problems: ['webhookUrl is not a URL'] };
    }
  },
});
