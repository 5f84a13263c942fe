import { ApiProperty } from '@nestjs/swagger';

export interface UserRow {
  id: string;
  email: string | null;
  name: string;
  slug: string;
  image: string | null;
  bio: string | null;
  password_hash: string | null;
  instance_role: 'owner' | 'admin' | null;
  created_at: Date;
  updated_at: Date;
}

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

/** Never the password hash. */
export function toUserResponse(u: UserRow): UserResponseDto {
  return {
    id: u.id,
    email: u.email,
    name: u.name,
    slug: u.slug,
    image: u.image,
    bio: u.bio,
    isInstanceAdmin: u.instance_role !== null,
    instanceRole: u.instance_role,
    createdAt: new Date(u.created_at).toISOString(),
    updatedAt: new Date(u.updated_at).toISOString(),
  };
}
