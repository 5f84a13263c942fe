import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ConfigError, loadConfig } from '../../src/config/app-config';

describe('loadConfig', () => {
  const dir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'cfg-'));

  it('defaults to local_trusted on 127.0.0.1:3100', () => {
    const c = loadConfig({ SERVICE_DATA_DIR: dir() });
    expect(c).toMatchObject({ port: 3100, host: '127.0.0.1', deploymentMode: 'local_trusted', enableCompanyDeletion: false });
  });

  it('reads SERVICE_TRUST_PROXY as off, on, a hop count or proxy addresses', () => {
    expect(loadConfig({ SERVICE_DATA_DIR: dir() }).trustProxy).toBe(false);
    expect(loadConfig({ SERVICE_DATA_DIR: dir(), SERVICE_TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ SERVICE_DATA_DIR: dir(), SERVICE_TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ SERVICE_DATA_DIR: dir(), SERVICE_TRUST_PROXY: '10.0.0.0/8, ::1' }).trustProxy).toEqual(['10.0.0.0/8', '::1']);
  });

  it('refuses a non-loopback HOST in local_trusted mode', () => {
    expect(() => loadConfig({ SERVICE_DATA_DIR: dir(), HOST: '0.0.0.0' })).toThrow(ConfigError);
    expect(loadConfig({ SERVICE_DATA_DIR: dir(), HOST: '0.0.0.0', SERVICE_DEPLOYMENT_MODE: 'authenticated' }).host).toBe('0.0.0.0');
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['SERVICE_DEPLOYMENT_MODE', 'open'],
    ['SERVICE_ENABLE_COMPANY_DELETION', 'maybe'],
    ['DATABASE_URL', 'mysql://x'],
    ['SERVICE_PUBLIC_URL', 'ftp://x'],
    ['SERVICE_ALLOWED_ATTACHMENT_TYPES', 'image/png,not a type'],
    ['SERVICE_JWT_SECRET', 'short'],
    ['SERVICE_TRUST_PROXY', 'maybe'],
    ['SERVICE_TRUST_PROXY', '10.0.0.1/99'],
  ])('rejects %s=%s with a clear message', (name, value) => {
    expect(() => loadConfig({ SERVICE_DATA_DIR: dir(), [name]: value })).toThrow(new RegExp(name));
  });

  it('generates keys into the data directory once, with mode 0600', () => {
    const d = dir();
    const a = loadConfig({ SERVICE_DATA_DIR: d });
    const b = loadConfig({ SERVICE_DATA_DIR: d });
    expect(Buffer.from(a.jwtSecret).equals(Buffer.from(b.jwtSecret))).toBe(true);
    expect(a.secretsMasterKey.equals(b.secretsMasterKey)).toBe(true);
    for (const f of ['jwt-secret', 'secrets-master-key']) {
      expect(fs.statSync(path.join(d, 'keys', f)).mode & 0o777).toBe(0o600);
    }
  });

  it('parses allowed attachment types with wildcards', () => {
    expect(
      loadConfig({ SERVICE_DATA_DIR: dir(), SERVICE_ALLOWED_ATTACHMENT_TYPES: 'image/*, application/pdf' }).allowedAttachmentTypes,
    ).toEqual(['image/*', 'application/pdf']);
  });
});
