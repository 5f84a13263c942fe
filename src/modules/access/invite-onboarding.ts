/**
 * Onboarding material handed to whoever holds an invite: a JSON description, the same as plain
 * text (for agents that read text), and small skills explaining how to join and how to call the API.
 */
export interface OnboardingContext {
  baseUrl: string;
  token: string;
  invite: { id: string; role: string; allowedJoinTypes: string; expiresAt: string; message: string | null };
  company: { id: string; name: string; description: string | null };
}

export const ONBOARDING_SKILLS: Record<string, { description: string; body: (c: OnboardingContext) => string }> = {
  'join-company': {
    description: 'How to accept this invite as an agent and claim an API key once approved',
    body: (c) => `---
name: join-company
description: Accept an invite to ${c.company.name} and claim an agent API key
---

# Joining ${c.company.name}

1. Accept the invite:
   \`POST ${inviteUrl(c)}/accept\` with JSON \`{ "requestType": "agent", "agentName": "<your name>", "adapterType": "<adapter>", "capabilities": "<what you do>" }\`.
   The reply is a join request with an \`id\` and a \`claimSecret\`. Keep the secret: it is shown once.
2. Wait until a board member approves the join request.
3. Claim your key: \`POST ${c.baseUrl}/api/join-requests/<id>/claim-api-key\` with \`{ "claimSecret": "<secret>" }\`.
   The reply carries \`token\`, your agent API key. It is shown once and works until revoked.
4. Check who you are: \`GET ${c.baseUrl}/api/cli-auth/me\` with \`Authorization: Bearer <token>\`.
`,
  },
  'service-basics': {
    description: 'How an agent calls the service once it has an API key',
    body: (c) => `---
name: service-basics
description: Calling the agent orchestration service as an agent
---

# Calling the service

- Base URL: ${c.baseUrl}/api
- Send \`Authorization: Bearer <your API key>\` on every request.
- During a heartbeat run, send \`X-Service-Run-Id: <run id>\` as well; checkout and run-bound routes need it.
- Your identity: \`GET /api/cli-auth/me\`; your company: \`GET /api/companies/${c.company.id}\`.
- You act only inside your own company.
`,
  },
};

export const inviteUrl = (c: Pick<OnboardingContext, 'baseUrl' | 'token'>) => `${c.baseUrl}/api/invites/${encodeURIComponent(c.token)}`;

export function onboardingJson(c: OnboardingContext) {
  const base = inviteUrl(c);
  return {
    invite: c.invite,
    company: c.company,
    service: { baseUrl: c.baseUrl, apiBaseUrl: `${c.baseUrl}/api` },
    steps: [
      'Read this document (also available as plain text at onboardingTextUrl).',
      'Accept the invite with POST accept.url and the body shown in accept.body.',
      'Agents: keep the claimSecret from the reply; after approval, claim an API key at claimApiKey.url.',
      'Humans: sign in first; accepting makes you a member with the invite role.',
    ],
    accept: {
      method: 'POST',
      url: `${base}/accept`,
      body: { requestType: 'agent', agentName: '<your name>', adapterType: '<adapter type>', capabilities: '<what you can do>' },
    },
    claimApiKey: {
      method: 'POST',
      url: `${c.baseUrl}/api/join-requests/{joinRequestId}/claim-api-key`,
      body: { claimSecret: '<claimSecret>' },
    },
    identity: { method: 'GET', url: `${c.baseUrl}/api/cli-auth/me` },
    onboardingTextUrl: `${base}/onboarding.txt`,
    skillsIndexUrl: `${base}/skills/index`,
  };
}

export function onboardingText(c: OnboardingContext): string {
  const base = inviteUrl(c);
  const lines = [
    `Invite to join ${c.company.name}`,
    ``,
    c.company.description ? `${c.company.description}\n` : null,
    c.invite.message ? `Message from the inviter: ${c.invite.message}\n` : null,
    `Who may join: ${c.invite.allowedJoinTypes === 'both' ? 'humans and agents' : c.invite.allowedJoinTypes === 'human' ? 'humans' : 'agents'}`,
    `Role for humans: ${c.invite.role}`,
    `Valid until: ${c.invite.expiresAt}`,
    ``,
    `How to join as an agent:`,
    `1. POST ${base}/accept`,
    `   Content-Type: application/json`,
    `   {"requestType":"agent","agentName":"<your name>","adapterType":"<adapter type>","capabilities":"<what you can do>"}`,
    `   The reply contains the join request "id" and a "claimSecret" (shown once; keep it).`,
    `2. Wait for a board member to approve the request.`,
    `3. POST ${c.baseUrl}/api/join-requests/<id>/claim-api-key with {"claimSecret":"<claimSecret>"}`,
    `   The reply contains "token", your agent API key (shown once).`,
    `4. Call the API with the header: Authorization: Bearer <token>`,
    ``,
    `How to join as a human: sign in to ${c.baseUrl}, then POST ${base}/accept with {"requestType":"human"}.`,
    ``,
    `Skills: ${base}/skills/index`,
  ];
  return lines.filter((l) => l !== null).join('\n') + '\n';
}

/** A prompt a board member pastes into an external agent's conversation to have it join. */
export function invitePrompt(c: OnboardingContext, opts: { agentName?: string; adapterType?: string; note?: string }): string {
  const base = inviteUrl(c);
  const body = JSON.stringify({
    requestType: 'agent',
    agentName: opts.agentName ?? '<choose a name>',
    adapterType: opts.adapterType ?? '<your adapter type>',
    capabilities: '<one paragraph on what you can do>',
  });
  return [
    `You are invited to join the company "${c.company.name}" on an agent orchestration service at ${c.baseUrl}.`,
    ``,
    `1. Read the onboarding instructions: GET ${base}/onboarding.txt`,
    `2. Accept the invite: POST ${base}/accept with the JSON body ${body}`,
    `3. Store the "claimSecret" from the reply securely; it is shown only once.`,
    `4. When the request is approved, POST ${c.baseUrl}/api/join-requests/<id>/claim-api-key with {"claimSecret":"<claimSecret>"} and store the returned API key securely.`,
    `5. Confirm with GET ${c.baseUrl}/api/cli-auth/me using the header "Authorization: Bearer <API key>".`,
    `The invite expires at ${c.invite.expiresAt}.`,
    opts.note ? `\nNote from the board: ${opts.note}` : '',
  ]
    .join('\n')
    .trimEnd();
}
