import { randomBytes, scrypt, ScryptOptions, timingSafeEqual } from 'node:crypto';

/** scrypt parameters (N=2^14, r=8, p=1: the interactive-login set, 16 MiB); stored with each hash so they can rise later. */
const PARAMS = { N: 16384, r: 8, p: 1 };
const KEY_LEN = 64;

const derive = (password: string, salt: Buffer, o: { N: number; r: number; p: number }, len: number) =>
  new Promise<Buffer>((resolve, reject) => {
    const options: ScryptOptions = { N: o.N, r: o.r, p: o.p, maxmem: 256 * o.N * o.r };
    scrypt(password.normalize('NFKC'), salt, len, options, (err, key) => (err ? reject(err) : resolve(key)));
  });

/** `scrypt$N$r$p$<salt b64>$<hash b64>` */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, PARAMS, KEY_LEN);
  return `scrypt$${PARAMS.N}$${PARAMS.r}$${PARAMS.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

/** Constant-time check. Without a stored hash (unknown user) a dummy derivation keeps the timing the same. */
export async function verifyPassword(password: string, stored: string | null | undefined): Promise<boolean> {
  const m = stored ? /^scrypt\$(\d+)\$(\d+)\$(\d+)\$([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+)$/.exec(stored) : null;
  if (!m) {
    await derive(password, randomBytes(16), PARAMS, KEY_LEN);
    return false;
  }
  const expected = Buffer.from(m[5], 'base64');
  const actual = await derive(
    password,
    Buffer.from(m[4], 'base64'),
    { N: Number(m[1]), r: Number(m[2]), p: Number(m[3]) },
    expected.length,
  );
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
