import { Global, Module } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Db } from './db.service';

export const DATA_SOURCE_PROVIDED = 'DATA_SOURCE_PROVIDED';

/** The DataSource is created and migrated by createApp() and handed in as a value provider. */
@Global()
@Module({})
export class DatabaseModule {
  static forDataSource(dataSource: DataSource) {
    return {
      module: DatabaseModule,
      providers: [{ provide: DataSource, useValue: dataSource }, Db],
      exports: [DataSource, Db],
    };
  }
}
