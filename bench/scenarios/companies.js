'use strict';
const { api, load } = require('../lib');

/** GET /api/companies/{id} and POST /api/companies at 10 connections. */
module.exports = async function companies(baseUrl) {
  const c = await api(baseUrl, 'POST', '/api/companies', { name: 'Bench Co' });
  let n = 0;
  return [
    await load('GET /api/companies/{id}', { url: `${baseUrl}/api/companies/${c.id}` }),
    await load('POST /api/companies', {
      url: `${baseUrl}/api/companies`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      setupClient: (client) => {
        client.setBody(JSON.stringify({ name: `Bench ${n++}` }));
      },
      requests: [{ setupRequest: (req) => ({ ...req, body: JSON.stringify({ name: `Bench ${n++}` }) }) }],
    }),
  ];
};
