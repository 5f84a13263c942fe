import { Global, Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { RouteRecordsRegistration } from './auth-registry.port-impl';
import { CompanyReferencesInterceptor } from './company-references.interceptor';
import { RecordCompanyResolvers } from './record-company-resolvers.port';
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
  providers: [RecordCompanyResolvers, CompanyReferencesInterceptor, RouteCompanyResolver, RouteRecordsRegistration],
  exports: [CompanyReferencesInterceptor, RecordCompanyResolvers, RouteCompanyResolver],
})
export class CompanyReferencesModule {}
