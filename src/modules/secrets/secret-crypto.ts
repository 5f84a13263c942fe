import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

export interface EncryptedValue {
  ciphertext: Buffer;
  iv: Buffer;
  authTag: Buffer;
}

const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12; // 96-bit IV, the GCM standard size; fresh for every version

/**
 * AES-256-GCM with the secret id and version as associated data, so a ciphertext copied onto
 * another secret or version row fails authentication instead of decrypting.
 */
export function encryptValue(key: Buffer, plaintext: string, aad: string): EncryptedValue {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv(ALGORITHM, key, iv);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return { ciphertext, iv, authTag: cipher.getAuthTag() };
}

/** Throws when the key, AAD, tag or ciphertext do not match: GCM never yields garbage. */
export function decryptValue(key: Buffer, enc: EncryptedValue, aad: string): string {
  const decipher = createDecipheriv(ALGORITHM, key, enc.iv);
  decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(enc.authTag);
  return Buffer.concat([decipher.update(enc.ciphertext), decipher.final()]).toString('utf8');
}

export const versionAad = (secretId: string, version: number) => `secret:${secretId}:v${version}`;

export const sha256OfValue = (value: string) => createHash('sha256').update(value, 'utf8').digest('hex');
