import { ApiProperty } from '@nestjs/swagger';

export class ChainVerifyResponseDto {
  /** every record up to the head matched its hash, its predecessor and the anchors */
  ok: boolean;
  /** records checked (up to the first broken one) */
  checked: number;
  /** the first broken record (for a gap: the missing record, as its successor names it); null when ok or unknown */
  @ApiProperty({ nullable: true, type: String }) firstBrokenId: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    enum: [
      'hash_mismatch',
      'missing_record',
      'prev_mismatch',
      'head_mismatch',
      'anchor_mismatch',
      'anchor_signature',
      'anchor_untrusted_key',
      'anchor_missing',
      'record_beyond_head',
      'unchained_record',
    ],
  })
  reason: string | null;
  /** the chain position of the break (decimal string) */
  @ApiProperty({ nullable: true, type: String }) seq: string | null;
  /** anchors whose hash and signature were checked */
  anchorsChecked: number;
}

export class ActivityAnchorResponseDto {
  id: string;
  companyId: string;
  /** the chain position anchored (decimal string) */
  seq: string;
  /** the record's chain hash, hex */
  hash: string;
  anchoredAt: string;
  /** first 16 hex digits of the SHA-256 of the public key (SPKI DER) */
  keyId: string;
  /** Ed25519 public key, SPKI DER, base64 */
  publicKey: string;
  /** Ed25519 signature, base64 (docs/audit-chain.md: what it covers) */
  signature: string;
}
