import { randomBytes } from 'node:crypto';
import { decryptValue, encryptValue, versionAad } from '../../src/modules/secrets/secret-crypto';
import { inferProjectionClass, looksSensitive, parseEnv, parseStoredEnv, redactValues } from '../../src/modules/secrets/secret-binding';

describe('secret crypto', () => {
  const key = randomBytes(32);

  it('round-trips with the same key and AAD', () => {
    const enc = encryptValue(key, 'hunter2-value', versionAad('s1', 1));
    expect(enc.iv).toHaveLength(12);
    expect(decryptValue(key, enc, versionAad('s1', 1))).toBe('hunter2-value');
  });

  it("refuses another key, another version's AAD or a flipped bit instead of returning garbage", () => {
    const enc = encryptValue(key, 'hunter2-value', versionAad('s1', 1));
    expect(() => decryptValue(randomBytes(32), enc, versionAad('s1', 1))).toThrow();
    expect(() => decryptValue(key, enc, versionAad('s1', 2))).toThrow();
    const flipped = Buffer.from(enc.ciphertext);
    flipped[0] ^= 1;
    expect(() => decryptValue(key, { ...enc, ciphertext: flipped }, versionAad('s1', 1))).toThrow();
  });
});

describe('env binding parsing', () => {
  it('recognises sensitive-looking keys', () => {
    for (const k of ['API_KEY', 'OPENAI_API_KEY', 'GH_TOKEN', 'CLIENT_SECRET', 'DB_PASSWORD', 'password', 'TOKEN'])
      expect(looksSensitive(k)).toBe(true);
    for (const k of ['KEYBOARD', 'HOME', 'MODEL', 'TOKENIZER', 'SECRETARY']) expect(looksSensitive(k)).toBe(false);
  });

  it('infers projection classes from the alias', () => {
    expect(inferProjectionClass('OPENAI_API_KEY')).toBe('api_key');
    expect(inferProjectionClass('GITHUB_TOKEN')).toBe('token');
    expect(inferProjectionClass('DB_PASSWORD')).toBe('password');
    expect(inferProjectionClass('DATABASE_URL')).toBe('connection_string');
    expect(inferProjectionClass('TLS_CERT')).toBe('certificate');
    expect(inferProjectionClass('OTHER')).toBe('generic');
  });

  it('reads stored env leniently: a broken entry is skipped, the rest stays', () => {
    const parsed = parseStoredEnv({ OK: { type: 'secret_ref', secretId: 'a' }, BAD: { type: 'secret_ref' }, PLAIN: 'x' });
    expect(parsed.bindings.map((b) => b.key)).toEqual(['OK']);
    expect(parsed.inline).toEqual({ PLAIN: 'x' });
    expect(() => parseEnv({ BAD: { type: 'secret_ref' } }, 'env')).toThrow(/env\.BAD\.secretId/);
  });

  it('redacts every occurrence, longest value first, leaving very short values alone', () => {
    expect(redactValues('a=secret-long b=secret c=1', ['secret', 'secret-long', '1'])).toBe('a=[redacted] b=[redacted] c=1');
  });
});
