import { redactionForms, StreamRedactor } from '../../src/common/process/stream-redactor';

const SECRET = 'sk-live-4f9a1c2e7b3d8e6f0a5b';

function feed(chunks: string[], values = [SECRET]): string {
  const r = new StreamRedactor(redactionForms(values));
  return chunks.map((c) => r.push(c)).join('') + r.flush();
}

describe('StreamRedactor', () => {
  it('redacts a value split over writes at every position', () => {
    for (let i = 1; i < SECRET.length; i++) {
      const out = feed([`key=${SECRET.slice(0, i)}`, `${SECRET.slice(i)} done\n`]);
      expect(out).toBe('key=[redacted] done\n');
    }
    expect(feed(SECRET.split(''))).toBe('[redacted]');
  });

  it('holds back only a tail that could start a value, and releases it when it does not', () => {
    const r = new StreamRedactor(redactionForms([SECRET]));
    expect(r.push('hello sk-li')).toBe('hello ');
    expect(r.push('mit reached\n')).toBe('sk-limit reached\n');
    expect(r.push('no secret here\n')).toBe('no secret here\n');
    expect(r.push('sk-')).toBe('');
    expect(r.flush()).toBe('sk-');
  });

  it('redacts base64 (also inside a larger encoded blob, any alignment), base64url and URL-encoded forms', () => {
    const weird = 'p@ss w/rd+&=?é-0123456789';
    for (const prefix of ['', 'u:', 'us:', 'use:']) {
      const blob = Buffer.from(`${prefix}${SECRET}!trailing`).toString('base64');
      const out = feed([`Authorization: Basic ${blob}\n`]);
      expect(out).toContain('[redacted]');
      // what is left of the blob no longer decodes to the secret
      expect(Buffer.from(out.replace(/.*Basic /, '').replace('[redacted]', ''), 'base64').toString('latin1')).not.toContain(
        SECRET.slice(2, -2),
      );
    }
    expect(feed([Buffer.from(SECRET).toString('base64')])).toMatch(/^\[redacted\].{0,3}$/);
    expect(feed([Buffer.from(weird).toString('base64url')], [weird])).toMatch(/^\[redacted\].{0,3}$/);
    expect(feed([`?q=${encodeURIComponent(weird)}&x=1`], [weird])).toBe('?q=[redacted]&x=1');
    expect(feed([`body=${encodeURIComponent(weird).replace(/%20/g, '+')}`], [weird])).toBe('body=[redacted]');
  });

  it('ignores values shorter than the minimum, and encodes only values of 8+ characters', () => {
    expect(feed(['abc abc'], ['abc'])).toBe('abc abc');
    expect(feed(['abcd abcd'], ['abcd'])).toBe('[redacted] [redacted]');
    expect(redactionForms(['abcdefg'])).toEqual(['abcdefg']);
    expect(redactionForms(['abcdefgh']).length).toBeGreaterThan(1);
  });
});
