import { createTestApp, TestApp } from '../support/test-app';

interface AdapterEntry {
  type: string;
  source: string;
  builtIn: boolean;
  disabled: boolean;
  loaded: unknown;
  modelsCount: number;
}

/**
 * What the board UI's new-agent form reads to offer a runtime: found by driving the published UI in
 * headless Chromium against the service (the form lists an adapter only when `loaded` is set and
 * `disabled` is false; the adapters page groups by `source` and shows `modelsCount`).
 */
describe('the board UI’s new-agent form', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const entry = async (type: string): Promise<AdapterEntry> => {
    const list = (await t.http.get('/api/adapters').expect(200)).body as AdapterEntry[];
    const e = list.find((a) => a.type === type);
    if (!e) throw new Error(`${type} not listed`);
    return e;
  };

  it('GET /api/adapters marks the built-in runtimes loaded, enabled, built-in, with their model count', async () => {
    for (const type of ['claude_local', 'codex_local', 'gemini_local', 'opencode_local']) {
      const e = await entry(type);
      expect(e).toMatchObject({
        source: 'builtin',
        builtIn: true,
        disabled: false,
        loaded: expect.objectContaining({ version: expect.any(String) }),
      });
      expect(e.modelsCount).toBeGreaterThan(0);
    }
    expect(await entry('process')).toMatchObject({ source: 'builtin', disabled: false, modelsCount: 0, loaded: expect.any(Object) });
  });

  it('a force-disabled type is `disabled` in the list (the form stops offering it)', async () => {
    await t.http.patch('/api/adapters/codex_local/override').send({ disabled: true, reason: 'not here' }).expect(200);
    expect(await entry('codex_local')).toMatchObject({ disabled: true, override: expect.objectContaining({ disabled: true }) });
    await t.http.patch('/api/adapters/codex_local/override').send({ disabled: false }).expect(200);
    expect((await entry('codex_local')).disabled).toBe(false);
  });
});
