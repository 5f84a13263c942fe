'use strict';
const { api, load } = require('../lib');

/** GET /api/companies/{id} and POST /api/companies at 10 connections. */
module.exports = async function companies(baseUrl) {
  const c = await api(baseUrl, 'POST', '/api/companies', { name: 'Bench Co' });
  let n = 0;
  // names start with random letters, so issue prefixes spread like real company names
  const name = () => `${Array.from({ length: 3 }, () => String.fromCharCode(65 + Math.floor(Math.random() * 26))).join('')} Bench ${n++}`;
  return [
    await load('GET /api/companies/{id}', { url: `${baseUrl}/api/companies/${c.id}` }),
    await load('POST /api/companies', {
      url: `${baseUrl}/api/companies`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      setupClient: (client) => {
        client.setBody(JSON.stringify({ name: name() }));
      },
      requests: [{ setupRequest: (req) => ({ ...req, body: JSON.stringify({ name: name() }) }) }],
    }),
  ];
};
