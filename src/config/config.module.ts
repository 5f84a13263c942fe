import { DynamicModule, Global, Module } from '@nestjs/common';
import { AppConfig } from './app-config';

/** The typed AppConfig, validated by loadConfig() before the app is built, is the one source of settings. */
@Global()
@Module({})
export class ConfigModule {
  static forConfig(config: AppConfig): DynamicModule {
    return {
      module: ConfigModule,
      providers: [{ provide: AppConfig, useValue: config }],
      exports: [AppConfig],
    };
  }
}
