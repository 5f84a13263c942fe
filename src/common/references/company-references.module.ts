import { Global, Module, OnModuleInit } from '@nestjs/common';
import { AuthRegistry } from '../auth/auth-registry';
import { AuthModule } from '../auth/auth.module';
import { CompanyReferencesInterceptor } from './company-references.interceptor';
import { RecordCompanyResolvers } from './record-company-resolvers';
import { RouteCompanyResolver } from './route-company';

/**
 * The reference check of request bodies (`@RefersTo` fields), registered as a global interceptor by
 * the app module, and the port its owners fill: `RecordCompanyResolvers` (global, so that every
 * module owning a referenced kind can register its resolver). It also lends the guard the company
 * of routes without `:companyId` (RouteCompanyResolver, through AuthRegistry).
 */
@Global()
@Module({
  imports: [AuthModule],
  providers: [RecordCompanyResolvers, CompanyReferencesInterceptor, RouteCompanyResolver],
  exports: [CompanyReferencesInterceptor, RecordCompanyResolvers, RouteCompanyResolver],
})
export class CompanyReferencesModule implements OnModuleInit {
  constructor(
    private readonly registry: AuthRegistry,
    private readonly routes: RouteCompanyResolver,
  ) {}

  /** The guard resolves the company of routes without `:companyId` through the records' owners. */
  onModuleInit(): void {
    this.registry.routeRecords = this.routes;
  }
}
