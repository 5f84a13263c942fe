import { ApiProperty } from '@nestjs/swagger';

export class GalleryCapabilitiesDto {
  canCreateOrganizationGrant: boolean;
  @ApiProperty({ nullable: true, type: String }) organizationGrantReason: string | null;
  canSetCompanyInstall: boolean;
  @ApiProperty({ nullable: true, type: String }) companyInstallReason: string | null;
}

export class ToolGalleryDto {
  @ApiProperty({ type: GalleryCapabilitiesDto }) capabilities: GalleryCapabilitiesDto;
  /** external credential brokers: none here (credentials are company secrets) */
  @ApiProperty({ type: Object }) credentialSources: Record<string, unknown>;
  /**
   * `{ slug, name, description, categories, featured, branding, urlPatterns, docsUrl, methods }`; a method is a
   * preset: `transport` (mcp_remote or local_stdio), `defaults` (`serverUrl`, or `command` and `args`),
   * `credentialFields` and where the key goes (`keyPlacement`: a header, or a variable of the command)
   */
  @ApiProperty({ type: [Object] }) apps: Record<string, unknown>[];
}
