import { hashPassword, verifyPassword } from '../../src/modules/users/password-hasher';
import { slugify } from '../../src/common/http/slug';

describe('password hashing', () => {
  it('verifies the right password only, with a fresh salt per hash', async () => {
    const a = await hashPassword('s3cret pass');
    const b = await hashPassword('s3cret pass');
    expect(a).not.toBe(b);
    expect(a).not.toContain('s3cret');
    expect(await verifyPassword('s3cret pass', a)).toBe(true);
    expect(await verifyPassword('s3cret pasS', a)).toBe(false);
    expect(await verifyPassword('s3cret pass', null)).toBe(false);
    expect(await verifyPassword('s3cret pass', 'plain')).toBe(false);
  });
});

describe('slugify', () => {
  it('folds accents and punctuation, trims dashes and falls back', () => {
    expect(slugify('  Ünïcode & Friends!! ', 40, 'user')).toBe('unicode-friends');
    expect(slugify('!!!', 40, 'user')).toBe('user');
    expect(slugify('abc def', 4, 'user')).toBe('abc');
  });
});
