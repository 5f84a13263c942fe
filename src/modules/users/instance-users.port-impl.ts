import { Injectable, OnModuleInit } from '@nestjs/common';
import { InstanceUsers } from '../instance/instance-users.port';
import { UsersRepository } from './users.repository';

/** User administration (instance) reads and writes the users table through its owner. */
@Injectable()
export class InstanceUsersRegistration implements OnModuleInit {
  constructor(
    private readonly instanceUsers: InstanceUsers,
    private readonly users: UsersRepository,
  ) {}

  onModuleInit(): void {
    this.instanceUsers.register(this.users);
  }
}
