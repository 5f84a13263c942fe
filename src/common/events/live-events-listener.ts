import { Injectable } from '@nestjs/common';
import { Client, ClientConfig, Notification, Pool } from 'pg';
import { DataSource } from 'typeorm';

/** A dedicated connection that LISTENs (not from the pool: it stays open). */
export interface EventListener {
  listen(channel: string): Promise<void>;
  close(): Promise<void>;
}

const CHANNEL_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * The dedicated LISTEN connection of the live event hub: a connection with the pool's settings,
 * outside the pool (it stays open). It runs no statement on a table, only LISTEN.
 */
@Injectable()
export class LiveEventsListenerFactory {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Opens a connection with the pool's settings that LISTENs on `channels`; `onLost` is called once
   * when it breaks (the caller reconnects).
   */
  async openListener(
    name: string,
    channels: string[],
    onNotify: (n: Notification) => void,
    onLost: (err?: Error) => void,
  ): Promise<EventListener> {
    const pool = (this.dataSource.driver as unknown as { master: Pool & { options: ClientConfig } }).master;
    const client = new Client({ ...pool.options, application_name: name.slice(0, 63) });
    let lost = false;
    const lose = (err?: Error) => {
      if (lost) return;
      lost = true;
      client.end().catch(() => undefined);
      onLost(err);
    };
    client.on('notification', onNotify);
    client.on('error', (err) => lose(err));
    client.on('end', () => lose());
    const listen = async (channel: string) => {
      if (!CHANNEL_NAME.test(channel)) throw new Error(`bad channel name ${channel}`);
      // eslint-disable-next-line no-restricted-syntax -- LISTEN on the dedicated connection, not a statement on a table
      await client.query(`LISTEN ${channel}`);
    };
    await client.connect();
    for (const channel of channels) await listen(channel);
    return {
      listen,
      close: async () => {
        lost = true;
        await client.end().catch(() => undefined);
      },
    };
  }
}
