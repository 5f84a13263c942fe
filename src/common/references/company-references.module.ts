import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { CompanyReferencesInterceptor } from './company-references.interceptor';
import { CompanyReferencesRepository } from './company-references.repository';

/** The reference check of request bodies (`@RefersTo` fields), registered as a global interceptor by the app module. */
@Module({
  imports: [AuthModule],
  providers: [CompanyReferencesRepository, CompanyReferencesInterceptor],
  exports: [CompanyReferencesInterceptor],
})
export class CompanyReferencesModule {}
