import { ApiProperty } from '@nestjs/swagger';
import { IsOptional, IsUUID } from 'class-validator';
import { RefersTo } from '../../../common/references/refers-to.decorator';

/** Multipart fields beside the one `file` part. */
export class UploadAttachmentDto {
  /** a comment of the same issue */
  @RefersTo('comment') @IsOptional() @IsUUID() issueCommentId?: string;
}

export class AttachmentResponseDto {
  id: string;
  companyId: string;
  issueId: string;
  @ApiProperty({ nullable: true, type: String }) issueCommentId: string | null;
  assetId: string;
  contentType: string;
  byteSize: number;
  sha256: string;
  @ApiProperty({ nullable: true, type: String }) originalFilename: string | null;
  @ApiProperty({ nullable: true, type: String }) createdByAgentId: string | null;
  @ApiProperty({ nullable: true, type: String }) createdByUserId: string | null;
  createdAt: string;
  updatedAt: string;
  /** `/api/attachments/<id>/content` */
  contentPath: string;
  /** same as contentPath */
  openPath: string;
  /** contentPath with `?download=1` */
  downloadPath: string;
}
