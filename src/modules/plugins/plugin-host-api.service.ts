import { Injectable } from '@nestjs/common';
import { JSONRPCErrorException } from 'json-rpc-2.0';
import { withDir } from '../../common/fs/tenant-dir';
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
          const { dir, name, rel } = await this.folders.folderPath(p, params);
          return withDir(dir, (parent) => {
            const target = name === null ? parent.walk([]) : parent.dir(name);
            if (!target) throw new Error(`${rel} is not a folder`);
            const entries = withDir(target, (t) => t.entries()).slice(0, MAX_FOLDER_ENTRIES);
            return {
              path: rel,
              entries: entries.map((e) => ({ name: e.name, type: e.type === 'dir' ? 'directory' : e.type === 'file' ? 'file' : 'other' })),
            };
          });
        },
      },
      'folders.read': {
        capability: 'folders.read',
        handler: async (params) => {
          const { dir, name, rel } = await this.folders.folderPath(p, params);
          return withDir(dir, (parent) => {
            // read through the folder's descriptor: a link, a FIFO or a file swapped meanwhile is not read
            const r = name === null ? null : parent.readFile(name, MAX_FOLDER_READ_BYTES, true);
            if (!r || r.kind !== 'read') throw new Error(`${rel} is not a file`);
            return { path: rel, size: r.size, truncated: r.size > r.bytes.length, content: r.bytes.toString('utf8') };
          });
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
