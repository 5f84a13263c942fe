'use strict';
// Team pulse: settings form (configSchema), dashboard, data feed, action and a live stream.
const { serve } = require('./runtime');

let config = {};
let events = []; // received since the worker started: { id, companyId, action }

serve({
  initialize: async (params) => {
    config = params.config || {};
    return { ok: true };
  },
  'config.changed': async (params) => {
    config = params.config || {};
  },
  'config.test': async ({ config: c }) =>
    c.title && /^\s+$/.test(c.title) ? { ok: false, problems: ['title must not be blank'] } : { ok: true },
  'events.deliver': async ({ event }, host) => {
    events.push({ id: event.id, companyId: event.companyId, action: event.action });
    if (events.length > 1000) events = events.slice(-1000);
    host.call('stream.publish', { channel: 'pulse', data: { companyId: event.companyId, action: event.action } }).catch(() => {});
    return { ok: true };
  },
  'data.get': async ({ key, companyId }) => {
    if (key !== 'events') throw new Error(`unknown feed ${key}`);
    return companyId ? events.filter((e) => e.companyId === companyId) : events;
  },
  'actions.run': async ({ key, params, companyId }, host) => {
    if (key === 'read-report') {
      // the host reads the company's configured `reports` folder for us (capability folders.read)
      const listing = await host.call('folders.list', { companyId, folderKey: 'reports', path: '' });
      const report = params && params.file ? await host.call('folders.read', { companyId, folderKey: 'reports', path: params.file }) : null;
      return { files: listing.entries.map((e) => e.name), report };
    }
    if (key !== 'reset') throw new Error(`unknown action ${key}`);
    const dropped = events.length;
    events = [];
    return { dropped };
  },
  'dashboard.get': async () => ({
    title: config.title || 'Team pulse',
    target: config.dailyTarget || 20,
    received: events.length,
    pid: process.pid,
    uid: process.getuid ? process.getuid() : null,
  }),
});
