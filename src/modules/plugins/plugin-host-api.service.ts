import { Injectable } from '@nestjs/common';
import * as fs from 'node:fs';
import { JSONRPCErrorException } from 'json-rpc-2.0';
import { endpointOutbound, OutboundRefusedError, OutboundTarget } from '../../common/net/outbound-guard';
import { AppConfig } from '../../config/app-config';
import { PluginConfigService } from './plugin-config.service';
import { PluginFoldersService } from './plugin-folders.service';
import { PluginSupervisor } from './plugin-supervisor.service';
import { HostApi, URL_NOT_ALLOWED } from './plugin-worker';
import { PluginRecord, PluginsRepository } from './plugins.repository';

/** what folders.read hands a worker at most */
const MAX_FOLDER_READ_BYTES = 1024 * 1024;
const MAX_FOLDER_ENTRIES = 1000;

/** The host API: what a plugin's worker may call back into the service. */
@Injectable()
export class PluginHostApiService {
  /** where http.fetch may go: as the webhook adapters' targets (endpointOutbound), built once */
  private readonly outbound: OutboundTarget;

  constructor(
    private readonly repo: PluginsRepository,
    private readonly supervisor: PluginSupervisor,
    private readonly configs: PluginConfigService,
    private readonly folders: PluginFoldersService,
    config: AppConfig,
  ) {
    this.outbound = endpointOutbound(config);
  }

  /** What a worker may call; each method needs the capability named (checked by the worker channel). */
  hostApi(p: PluginRecord): HostApi {
    const id = p.id;
    return {
      log: {
        capability: null,
        handler: (params) => {
          const level = ['info', 'warn', 'error', 'debug'].includes(params.level as string) ? (params.level as 'info') : 'info';
          this.supervisor.log(id, { level, source: 'worker', message: String(params.message ?? '').slice(0, 4000) });
          return { ok: true };
        },
      },
      'config.get': {
        capability: 'config.read',
        handler: async () => {
          const current = await this.repo.find(id);
          return current ? this.configs.workerConfig(current) : {};
        },
      },
      'http.fetch': {
        capability: 'http.outbound',
        handler: async (params) => {
          const url = String(params.url ?? '');
          if (!/^https?:\/\//.test(url)) throw new Error('url must be http(s)');
          // through the outbound guard: no private, link-local (cloud metadata) or other non-public
          // destination, on any redirect hop either
          const { guard, options } = this.outbound;
          const init = {
            method: typeof params.method === 'string' ? params.method : 'GET',
            headers: (params.headers as Record<string, string>) ?? undefined,
            body: params.body === undefined ? undefined : typeof params.body === 'string' ? params.body : JSON.stringify(params.body),
            signal: AbortSignal.timeout(15_000),
          };
          const res = await guard.fetch(url, init, options).catch((err: unknown) => {
            if (err instanceof OutboundRefusedError) throw new JSONRPCErrorException(err.message, URL_NOT_ALLOWED, { reason: err.reason });
            throw err;
          });
          const text = await res.text();
          return { status: res.status, body: text.slice(0, 1_000_000) };
        },
      },
      'folders.list': {
        capability: 'folders.read',
        handler: async (params) => {
          const { dir, rel } = await this.folders.folderPath(p, params);
          const entries = fs.readdirSync(dir, { withFileTypes: true }).slice(0, MAX_FOLDER_ENTRIES);
          return {
            path: rel,
            entries: entries.map((e) => ({ name: e.name, type: e.isDirectory() ? 'directory' : e.isFile() ? 'file' : 'other' })),
          };
        },
      },
      'folders.read': {
        capability: 'folders.read',
        handler: async (params) => {
          const { dir: file, rel } = await this.folders.folderPath(p, params);
          const stat = fs.statSync(file);
          if (!stat.isFile()) throw new Error(`${rel} is not a file`);
          const fd = fs.openSync(file, 'r');
          try {
            const buf = Buffer.alloc(Math.min(stat.size, MAX_FOLDER_READ_BYTES));
            const n = fs.readSync(fd, buf, 0, buf.length, 0);
            return { path: rel, size: stat.size, truncated: stat.size > n, content: buf.subarray(0, n).toString('utf8') };
          } finally {
            fs.closeSync(fd);
          }
        },
      },
      'stream.publish': {
        capability: 'ui.stream',
        handler: (params) => {
          const channel = String(params.channel ?? '');
          if (!/^[a-zA-Z0-9._-]{1,64}$/.test(channel)) throw new Error('invalid channel');
          this.supervisor.streams.emit(`${id}:${channel}`, params.data ?? null);
          return { ok: true };
        },
      },
    };
  }
}
