import { ApiProperty } from '@nestjs/swagger';

export class AdapterTypeDto {
  type: string;
  label: string;
  builtIn: boolean;
  /** an executor is available on this instance, so runs of this type can start */
  executable: boolean;
  @ApiProperty({ type: Object }) configSchema: Record<string, unknown>;
}
