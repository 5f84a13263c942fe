import * as http from 'node:http';
import { createCompany } from '../support/factories';
import { AUTHENTICATED, signIn, signUp } from '../support/users';
import { createTestApp, TestApp } from '../support/test-app';

/**
 * A mutation's transaction takes its connection with its first statement: a body still streaming
 * in (an upload) or CPU work before the first write (password hashing) holds no pooled connection
 * idle in a transaction.
 */
describe('transaction scope of mutating routes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ listen: true });
  });
  afterAll(() => t.close());

  const idleInTransaction = async (): Promise<number> => {
    const [row] = await t.dataSource.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'`,
    );
    return row.n;
  };

  it('holds no connection idle in a transaction while a multipart upload is still arriving', async () => {
    const company = await createCompany(t);
    const boundary = 'xBOUNDARYx';
    const url = new URL(`${t.baseUrl}/api/companies/${company.id}/logo`);
    const req = http.request({
      host: url.hostname,
      port: url.port,
      path: url.pathname,
      method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'transfer-encoding': 'chunked' },
    });
    const done = new Promise<number>((resolve, reject) => {
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
    });
    req.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="logo.png"\r\nContent-Type: image/png\r\n\r\n`);
    req.write(Buffer.from('89504e470d0a1a0a', 'hex'));
    // the route is running (guard passed, interceptors entered) and waits for the rest of the body
    await new Promise((r) => setTimeout(r, 400));
    const during = await idleInTransaction();
    req.end(`\r\n--${boundary}--\r\n`);
    const status = await done;
    expect(during).toBe(0);
    expect(status).toBeLessThan(500);
  });

  it('sign-in verifies the password (scrypt) with no connection idle in a transaction', async () => {
    const a = await createTestApp({ env: AUTHENTICATED, databaseUrl: t.databaseUrl });
    try {
      const idle = async () => {
        const [r] = await t.dataSource.query(
          // a transaction whose last statement is sign-in's read of the user, i.e. one waiting on the hash check
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'
             AND query LIKE 'SELECT * FROM users WHERE lower(email)%'`,
        );
        return r.n as number;
      };
      // poll from the side while the requests run (scrypt runs on the thread pool, so the loop stays free)
      const watch = async (work: Promise<unknown>) => {
        let settled = false;
        let seen = 0;
        void work.finally(() => (settled = true));
        while (!settled) seen = Math.max(seen, await idle());
        await work;
        return seen;
      };
      const user = await signUp(a);
      const seen = await watch(Promise.all([1, 2, 3, 4].map(() => signIn(a, user.email, user.password))));
      expect(seen).toBe(0);
    } finally {
      await a.close();
    }
  });
});
