/**
 * A small gallery of well-known MCP servers with presets: a remote server's URL and the header its
 * key goes in, or a local server's command with the variables it needs. The board creates a
 * connection from a preset (`galleryKey` + `connectionMethodKey`) by giving the required secrets.
 * Shapes follow the board UI's gallery (apps with methods); `defaults` carry the preset.
 */
export interface GalleryCredentialField {
  key: string;
  label: string;
  type: 'password' | 'text';
  required: boolean;
  secret: boolean;
  placeholder?: string;
}

export interface GalleryMethod {
  key: string;
  label: string;
  purpose: 'tool';
  transport: 'mcp_remote' | 'local_stdio';
  auth: 'api_key' | 'none';
  ownershipModes: ['customer'];
  whenToUse: string;
  guidanceMd: string;
  riskTier: string;
  defaults: { serverUrl?: string; command?: string; args?: string[] };
  credentialFields?: GalleryCredentialField[];
  /** where the secret goes: a header of the remote server's requests, or a variable of the local command */
  keyPlacement?: { location: 'header' | 'env'; name: string; prefix?: string };
}

export interface GalleryApp {
  schemaVersion: 1;
  slug: string;
  name: string;
  description: string;
  categories: string[];
  featured: boolean;
  branding: { logoUrl?: string; darkLogoUrl?: string };
  urlPatterns: string[];
  docsUrl: string;
  methods: GalleryMethod[];
  ownershipAvailability: { platform_shared: false; platform_provisioned: false; customer: true; dcr: false };
}

const OWNERSHIP = { platform_shared: false, platform_provisioned: false, customer: true, dcr: false } as const;
const token = (label: string, placeholder: string): GalleryCredentialField[] => [
  { key: 'token', label, type: 'password', required: true, secret: true, placeholder },
];

function remote(slug: string, serverUrl: string, label: string, placeholder: string, riskTier = 'S3'): GalleryMethod {
  return {
    key: 'remote-key',
    label: 'Remote server with a key',
    purpose: 'tool',
    transport: 'mcp_remote',
    auth: 'api_key',
    ownershipModes: ['customer'],
    whenToUse: 'The provider hosts the server; agents reach it through the service, which adds the key.',
    guidanceMd: `Create a key limited to what agents need and store it as a company secret. It is sent as a header by the service's gateway and never reaches an agent (${slug}).`,
    riskTier,
    defaults: { serverUrl },
    credentialFields: token(label, placeholder),
    keyPlacement: { location: 'header', name: 'Authorization', prefix: 'Bearer ' },
  };
}

function local(
  command: string,
  args: string[],
  whenToUse: string,
  env?: { name: string; label: string; placeholder: string },
): GalleryMethod {
  return {
    key: 'local',
    label: 'Local command',
    purpose: 'tool',
    transport: 'local_stdio',
    auth: env ? 'api_key' : 'none',
    ownershipModes: ['customer'],
    whenToUse,
    guidanceMd:
      'The agent’s CLI starts this command under the agent’s own identity for each run. A key it needs is put in its environment (the agent can read it: prefer remote servers for keys agents must not see).',
    riskTier: 'S2',
    defaults: { command, args },
    ...(env ? { credentialFields: token(env.label, env.placeholder), keyPlacement: { location: 'env' as const, name: env.name } } : {}),
  };
}

export const TOOL_GALLERY: GalleryApp[] = [
  {
    schemaVersion: 1,
    slug: 'github',
    name: 'GitHub',
    description: 'Repositories, issues and pull requests through GitHub’s hosted MCP server.',
    categories: ['developer'],
    featured: true,
    branding: { logoUrl: '/brands/apps/github.svg', darkLogoUrl: '/brands/apps/github-dark.svg' },
    urlPatterns: ['https://api.githubcopilot.com/mcp/*'],
    docsUrl: 'https://github.com/github/github-mcp-server',
    methods: [remote('github', 'https://api.githubcopilot.com/mcp/', 'GitHub token', 'github_pat_...')],
    ownershipAvailability: OWNERSHIP,
  },
  {
    schemaVersion: 1,
    slug: 'linear',
    name: 'Linear',
    description: 'Issues, projects and comments in Linear.',
    categories: ['productivity'],
    featured: true,
    branding: { logoUrl: '/brands/apps/linear.svg', darkLogoUrl: '/brands/apps/linear-dark.svg' },
    urlPatterns: ['https://mcp.linear.app/*'],
    docsUrl: 'https://linear.app/docs/mcp',
    methods: [remote('linear', 'https://mcp.linear.app/mcp', 'Linear API key', 'lin_api_...')],
    ownershipAvailability: OWNERSHIP,
  },
  {
    schemaVersion: 1,
    slug: 'context7',
    name: 'Context7',
    description: 'Up-to-date library documentation for coding agents.',
    categories: ['developer'],
    featured: false,
    branding: { logoUrl: '/brands/apps/context7.svg', darkLogoUrl: '/brands/apps/context7-dark.svg' },
    urlPatterns: ['https://mcp.context7.com/*'],
    docsUrl: 'https://github.com/upstash/context7',
    methods: [remote('context7', 'https://mcp.context7.com/mcp', 'Context7 API key', 'ctx7sk-...', 'S1')],
    ownershipAvailability: OWNERSHIP,
  },
  {
    schemaVersion: 1,
    slug: 'stripe',
    name: 'Stripe',
    description: 'Customers, payments and the Stripe docs; use a restricted key.',
    categories: ['finance'],
    featured: false,
    branding: { logoUrl: '/brands/apps/stripe.svg' },
    urlPatterns: ['https://mcp.stripe.com/*'],
    docsUrl: 'https://docs.stripe.com/mcp',
    methods: [remote('stripe', 'https://mcp.stripe.com', 'Stripe restricted key', 'rk_live_...', 'S4')],
    ownershipAvailability: OWNERSHIP,
  },
  {
    schemaVersion: 1,
    slug: 'playwright',
    name: 'Playwright',
    description: 'A browser the agent drives: open pages, click, fill forms, take snapshots.',
    categories: ['developer'],
    featured: false,
    branding: {},
    urlPatterns: [],
    docsUrl: 'https://github.com/microsoft/playwright-mcp',
    methods: [local('npx', ['-y', '@playwright/mcp@latest', '--headless'], 'Agents test web pages in a headless browser on the host.')],
    ownershipAvailability: OWNERSHIP,
  },
  {
    schemaVersion: 1,
    slug: 'memory',
    name: 'Memory',
    description: 'A small knowledge graph the agent keeps in a file of its own home.',
    categories: ['productivity'],
    featured: false,
    branding: {},
    urlPatterns: [],
    docsUrl: 'https://github.com/modelcontextprotocol/servers/tree/main/src/memory',
    methods: [local('npx', ['-y', '@modelcontextprotocol/server-memory'], 'Agents keep notes between runs.')],
    ownershipAvailability: OWNERSHIP,
  },
  {
    schemaVersion: 1,
    slug: 'brave-search',
    name: 'Brave Search',
    description: 'Web search through the Brave Search API.',
    categories: ['research'],
    featured: false,
    branding: {},
    urlPatterns: [],
    docsUrl: 'https://github.com/brave/brave-search-mcp-server',
    methods: [
      local('npx', ['-y', '@brave/brave-search-mcp-server'], 'Agents search the web.', {
        name: 'BRAVE_API_KEY',
        label: 'Brave Search API key',
        placeholder: 'BSA...',
      }),
    ],
    ownershipAvailability: OWNERSHIP,
  },
];

export function galleryMethod(slug: string, methodKey?: string): { app: GalleryApp; method: GalleryMethod } | null {
  const app = TOOL_GALLERY.find((a) => a.slug === slug);
  const method = app?.methods.find((m) => !methodKey || m.key === methodKey);
  return app && method ? { app, method } : null;
}
