'use strict';
// Word tools: a tool (word-count) and an inbound webhook (echo).
const { serve } = require('./runtime');

serve({
  'tools.execute': async ({ name, input, context }) => {
    if (name === 'word-count') {
      const words = input.text.trim() ? input.text.trim().split(/\s+/).length : 0;
      return { words, characters: input.text.length, companyId: context.companyId };
    }
    if (name === 'sleep') {
      await new Promise((r) => setTimeout(r, input.ms));
      return { slept: input.ms };
    }
    throw new Error(`unknown tool ${name}`);
  },
  'webhooks.handle': async ({ endpointKey, body, headers }) => ({
    status: 202,
    body: { endpoint: endpointKey, received: body, contentType: headers['content-type'] || null },
  }),
});
