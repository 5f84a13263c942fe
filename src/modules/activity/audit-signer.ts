import { createHash, createPrivateKey, createPublicKey, KeyObject, sign, verify } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';

/** PKCS#8 wrapping of a raw 32-byte Ed25519 seed (RFC 8410). */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

export interface AnchorStatement {
  companyId: string;
  seq: string;
  hash: Buffer;
  anchoredAt: Date;
}

/** The bytes an anchor's signature covers (scripts/verify-activity-chain.js builds the same). */
export function anchorMessage(a: AnchorStatement): Buffer {
  return Buffer.from(
    `service-activity-anchor/v1\n${a.companyId}\n${a.seq}\n${a.hash.toString('hex')}\n${a.anchoredAt.toISOString()}`,
    'utf8',
  );
}

/** The public key id: the first 16 hex digits of the SHA-256 of its SPKI DER. */
export function keyIdOf(spkiBase64: string): string {
  return createHash('sha256').update(Buffer.from(spkiBase64, 'base64')).digest('hex').slice(0, 16);
}

/** Whether an anchor's signature verifies with the public key it names (SPKI DER, base64). */
export function anchorSignatureValid(a: AnchorStatement, publicKey: string, signature: Buffer): boolean {
  try {
    const key = createPublicKey({ key: Buffer.from(publicKey, 'base64'), format: 'der', type: 'spki' });
    return verify(null, anchorMessage(a), key, signature);
  } catch {
    return false;
  }
}

/** The instance's anchor signing key (Ed25519, from the configured seed). */
@Injectable()
export class AuditSigner {
  private readonly privateKey: KeyObject;
  /** SPKI DER, base64 */
  readonly publicKey: string;
  readonly keyId: string;

  constructor(config: AppConfig) {
    this.privateKey = createPrivateKey({
      key: Buffer.concat([ED25519_PKCS8_PREFIX, config.audit.signingKey]),
      format: 'der',
      type: 'pkcs8',
    });
    this.publicKey = createPublicKey(this.privateKey).export({ format: 'der', type: 'spki' }).toString('base64');
    this.keyId = keyIdOf(this.publicKey);
  }

  sign(a: AnchorStatement): Buffer {
    return sign(null, anchorMessage(a), this.privateKey);
  }
}
