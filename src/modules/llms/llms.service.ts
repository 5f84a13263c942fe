import { Injectable } from '@nestjs/common';
import type { ConfigFieldSchema } from '../adapters/adapter-config-schema';
import { AdapterRegistry, AdapterTypeDefinition } from '../adapters/adapter-registry.service';
import { AdapterExecutors } from '../adapters/adapter-executors';
import { syncModeOf } from '../skills/skill-delivery';

/** Icon names an agent may carry in `metadata.icon` (the board shows them next to the agent). */
export const AGENT_ICON_NAMES = [
  'bot',
  'cpu',
  'brain',
  'sparkles',
  'code',
  'terminal',
  'git-branch',
  'bug',
  'wrench',
  'hammer',
  'rocket',
  'shield',
  'lock',
  'search',
  'book',
  'file-text',
  'pen-tool',
  'palette',
  'image',
  'camera',
  'music',
  'mail',
  'message-square',
  'phone',
  'briefcase',
  'bar-chart',
  'pie-chart',
  'trending-up',
  'dollar-sign',
  'calendar',
  'clock',
  'globe',
  'database',
  'server',
  'cloud',
  'zap',
  'target',
  'flag',
  'compass',
  'map',
  'users',
  'user',
  'heart',
  'star',
  'lightbulb',
  'graduation-cap',
  'scale',
  'clipboard-check',
  'megaphone',
  'headphones',
];

const SKILL_DELIVERY: Record<string, string> = {
  ephemeral: 'skills are written to a fresh folder before each run; its path is in SERVICE_SKILLS_DIR',
  persistent: 'skills are kept in <cwd>/.service/skills (SERVICE_SKILLS_DIR) and updated before each run',
  unsupported: 'the adapter cannot receive files; skill assignments are recorded only',
};

function fieldLine(name: string, f: ConfigFieldSchema, required: boolean): string {
  const bits: string[] = [f.type];
  if ('enum' in f && f.enum) bits.push(`one of ${f.enum.join(', ')}`);
  if ('format' in f && f.format) bits.push(`format ${f.format}`);
  if ('minimum' in f && f.minimum !== undefined) bits.push(`minimum ${f.minimum}`);
  if ('minLength' in f && f.minLength !== undefined) bits.push(`non-empty`);
  const desc = f.description;
  return `  - ${name}${required ? ' (required)' : ''}: ${bits.join(', ')}${desc ? ` - ${desc}` : ''}`;
}

/**
 * The plain-text documents for language models (GET /api/llms/*), generated from the adapter
 * registry and its config schemas each time, so they cannot drift from what the service accepts.
 */
@Injectable()
export class LlmsService {
  constructor(
    private readonly registry: AdapterRegistry,
    private readonly executors: AdapterExecutors,
  ) {}

  has(type: string): boolean {
    return this.registry.has(type);
  }

  private adapterSection(def: AdapterTypeDefinition): string {
    const exec = this.executors.get(def.type);
    const skills = exec?.description.skills;
    const required = new Set(def.configSchema.required ?? []);
    const lines = [
      `## ${def.type} (${def.label})`,
      ``,
      `${def.builtIn ? 'Built-in' : 'External'} adapter type. adapterConfig fields:`,
      ...Object.entries(def.configSchema.properties).map(([name, f]) => fieldLine(name, f, required.has(name))),
      ``,
      `Skills: mode ${syncModeOf(skills, {})} without cwd, ${syncModeOf(skills, { cwd: '/x' })} with cwd - ${SKILL_DELIVERY[syncModeOf(skills, { cwd: '/x' })]}.`,
      `Runnable here: ${exec ? 'yes' : 'no executor registered'}.`,
    ];
    return lines.join('\n');
  }

  agentConfiguration(baseUrl: string): string {
    const defs = this.registry.list();
    return [
      `# Agent configuration`,
      ``,
      `How to create an agent of this service: POST ${baseUrl}/api/companies/{companyId}/agents (or /agent-hires when hires need approval) with JSON:`,
      `  name (required), role (e.g. ceo, engineer, general), title, capabilities (free text), reportsTo (agent id or null),`,
      `  adapterType (required; see below), adapterConfig (object; fields per adapter type), runtimeConfig`,
      `  ({ heartbeat: { enabled, intervalSec } }), budgetMonthlyCents (integer), desiredSkills (skill ids, keys or slugs), metadata (object; metadata.icon: see ${baseUrl}/api/llms/agent-icons.txt).`,
      ``,
      `adapterConfig.env maps variable names to strings or { "type": "secret_ref", "secretId": "<id>", "version": "latest" }.`,
      `Skills: GET ${baseUrl}/api/companies/{companyId}/skills lists the company's skills; POST ${baseUrl}/api/agents/{agentId}/skills/sync { "desiredSkills": [...] } sets an agent's skills.`,
      ``,
      `Adapter types (${defs.length}): ${defs.map((d) => d.type).join(', ')}. One type per document: ${baseUrl}/api/llms/agent-configuration/{adapterType}.txt`,
      ``,
      ...defs.map((d) => this.adapterSection(d) + '\n'),
    ].join('\n');
  }

  adapterConfiguration(type: string, baseUrl: string): string {
    const def = this.registry.get(type)!;
    return [
      `# Agent configuration: ${type}`,
      ``,
      `Create with POST ${baseUrl}/api/companies/{companyId}/agents and "adapterType": "${type}".`,
      ``,
      this.adapterSection(def),
      '',
    ].join('\n');
  }

  agentIcons(): string {
    return [
      `# Agent icons`,
      ``,
      `Set an agent's icon with metadata.icon (PATCH /api/agents/{agentId} { "metadata": { "icon": "<name>" } }). Names:`,
      ``,
      ...AGENT_ICON_NAMES,
      '',
    ].join('\n');
  }
}
