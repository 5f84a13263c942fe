import { isoRequired } from '../../database/row-mapping';
import { UserResponseDto } from './dto/user.dto';

/** A user (read by users.repository.ts; user administration in instance reaches it through `InstanceUsers`). */
export interface UserRecord {
  id: string;
  email: string | null;
  name: string;
  slug: string;
  image: string | null;
  bio: string | null;
  passwordHash: string | null;
  instanceRole: 'owner' | 'admin' | null;
  createdAt: Date;
  updatedAt: Date;
}

/** Never the password hash. */
export function toUserResponse(u: UserRecord): UserResponseDto {
  return {
    id: u.id,
    email: u.email,
    name: u.name,
    slug: u.slug,
    image: u.image,
    bio: u.bio,
    isInstanceAdmin: u.instanceRole !== null,
    instanceRole: u.instanceRole,
    createdAt: isoRequired(u.createdAt),
    updatedAt: isoRequired(u.updatedAt),
  };
}

export { UserResponseDto };
