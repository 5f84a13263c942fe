import { ApiProperty } from '@nestjs/swagger';

export class ConnectionInstallDto {
  @ApiProperty({ enum: ['company', 'agent'] }) targetType: string;
  targetId: string;
  /** the profile whose binding gives the access */
  profileId: string;
}

export class ConnectionInstallsDto {
  connectionId: string;
  /** who may use the connection: the bindings of the profiles that allow it (access is managed with profiles) */
  @ApiProperty({ type: [ConnectionInstallDto] }) installs: ConnectionInstallDto[];
}

export class ConnectionGrantDto {
  id: string;
  companyId: string;
  connectionId: string;
  @ApiProperty({ enum: ['organization'] }) kind: string;
  @ApiProperty({ nullable: true, type: String }) subjectUserId: null;
  @ApiProperty({ nullable: true, type: String }) subjectAgentId: null;
  @ApiProperty({ type: [Object] }) credentialSecretRefs: unknown[];
  @ApiProperty({ enum: ['active', 'revoked'] }) status: string;
  isDefault: boolean;
  @ApiProperty({ nullable: true, type: String }) lastUsedAt: string | null;
  @ApiProperty({ type: [Object] }) members: unknown[];
  @ApiProperty({ type: [Object] }) delegations: unknown[];
  @ApiProperty({ type: Object }) capabilities: Record<string, boolean>;
  createdAt: string;
  updatedAt: string;
}

export class ConnectionGrantsDto {
  @ApiProperty({ type: Object }) connection: { id: string; uid: string };
  /** one company-wide credential (the connection's secret references): there are no personal grants */
  @ApiProperty({ type: [ConnectionGrantDto] }) grants: ConnectionGrantDto[];
  @ApiProperty({ type: Object }) capabilities: Record<string, unknown>;
  @ApiProperty({ nullable: true, type: String }) currentUserId: string | null;
  @ApiProperty({ type: [Object] }) members: unknown[];
}

export class AttentionAppDto {
  @ApiProperty({ type: Object }) connection: {
    id: string;
    name: string;
    applicationId: string;
    healthStatus: string;
    healthMessage: string | null;
  };
  pendingActionRequestCount: number;
  quarantinedCatalogEntryCount: number;
}

export class AttentionTotalsDto {
  connections: number;
  /** connections whose last check failed */
  health: number;
  quarantinedCatalogEntries: number;
  pendingActionRequests: number;
  newToolsPendingReview: number;
  newToolsPendingProfiles: number;
}

export class AppsAttentionDto {
  generatedAt: string;
  /** connections that need the board: a failed check, or calls waiting for approval */
  @ApiProperty({ type: [AttentionAppDto] }) apps: AttentionAppDto[];
  @ApiProperty({ type: AttentionTotalsDto }) totals: AttentionTotalsDto;
}

export class ToolPolicyListDto {
  /** per-tool policies live in profiles (allow, ask, deny): no separate policies */
  @ApiProperty({ type: [Object] }) policies: unknown[];
}
