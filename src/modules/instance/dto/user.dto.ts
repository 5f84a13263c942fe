import { ApiProperty } from '@nestjs/swagger';

export class UserResponseDto {
  id: string;
  @ApiProperty({ nullable: true, type: String }) email: string | null;
  name: string;
  slug: string;
  @ApiProperty({ nullable: true, type: String }) image: string | null;
  @ApiProperty({ nullable: true, type: String }) bio: string | null;
  isInstanceAdmin: boolean;
  @ApiProperty({ nullable: true, enum: ['owner', 'admin'] }) instanceRole: 'owner' | 'admin' | null;
  createdAt: string;
  updatedAt: string;
}
