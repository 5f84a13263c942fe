import { isoRequired } from '../../database/row-mapping';
import { UserResponseDto } from './dto/user.dto';

/** A row of the users table (read by users.repository.ts; user administration in instance reaches it through `InstanceUsers`). */
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
    createdAt: isoRequired(u.created_at),
    updatedAt: isoRequired(u.updated_at),
  };
}

export { UserResponseDto };
