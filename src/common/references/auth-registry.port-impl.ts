import { Injectable, OnModuleInit } from '@nestjs/common';
import { AuthRegistry } from '../auth/auth-registry.port';
import { RouteCompanyResolver } from './route-company';

/** The guard resolves the company of routes without `:companyId` through the records' owners. */
@Injectable()
export class RouteRecordsRegistration implements OnModuleInit {
  constructor(
    private readonly registry: AuthRegistry,
    private readonly routes: RouteCompanyResolver,
  ) {}

  onModuleInit(): void {
    this.registry.routeRecords = this.routes;
  }
}
