import { Global, Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { CompanyReferencesInterceptor } from './company-references.interceptor';
import { RecordCompanyResolvers } from './record-company-resolvers';

/**
 * The reference check of request bodies (`@RefersTo` fields), registered as a global interceptor by
 * the app module, and the port its owners fill: `RecordCompanyResolvers` (global, so that every
 * module owning a referenced kind can register its resolver).
 */
@Global()
@Module({
  imports: [AuthModule],
  providers: [RecordCompanyResolvers, CompanyReferencesInterceptor],
  exports: [CompanyReferencesInterceptor, RecordCompanyResolvers],
})
export class CompanyReferencesModule {}
