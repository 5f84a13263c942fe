import { DynamicModule, Global, Module } from '@nestjs/common';
import { ConfigModule as NestConfigModule } from '@nestjs/config';
import { AppConfig } from './app-config';

/**
 * The typed AppConfig, validated by loadConfig() before the app is built, is the one source of
 * settings; @nestjs/config's ConfigService is available for libraries that expect it.
 */
@Global()
@Module({})
export class ConfigModule {
  static forConfig(config: AppConfig): DynamicModule {
    return {
      module: ConfigModule,
      imports: [NestConfigModule.forRoot({ ignoreEnvFile: true, isGlobal: true })],
      providers: [{ provide: AppConfig, useValue: config }],
      exports: [AppConfig],
    };
  }
}
