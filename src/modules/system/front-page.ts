/** What the front page (`GET /`) shows of the instance. */
export interface FrontPageFacts {
  version: string;
  deploymentMode: string;
  /** where the API is reached from outside (SERVICE_PUBLIC_URL, else HOST and PORT) */
  publicUrl: string;
}

const escapeHtml = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/**
 * The front page: a newcomer who opens the service in a browser learns what it is and where to go
 * (the API reference, the docs, health, how a board UI reaches it). Links are relative, so they work
 * behind a proxy; nothing in it is secret.
 */
export function frontPageHtml(facts: FrontPageFacts): string {
  const version = escapeHtml(facts.version);
  const mode = escapeHtml(facts.deploymentMode);
  const api = escapeHtml(`${facts.publicUrl.replace(/\/+$/, '')}/api`);
  const credentials =
    facts.deploymentMode === 'local_trusted'
      ? 'In <code>local_trusted</code> mode requests from this host without credentials act as the board (you).'
      : 'In <code>authenticated</code> mode sign in (<code>POST /api/auth/sign-in/email</code>) or send a board API token (<code>aos token create</code>).';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Agent Orchestration Service</title>
<style>
body { font: 16px/1.5 system-ui, sans-serif; max-width: 46rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
code { background: #f2f2f2; padding: 0 .25em; border-radius: 3px; }
h2 { margin-top: 1.6em; font-size: 1.15em; }
.muted { color: #666; }
</style>
</head>
<body>
<h1>Agent Orchestration Service</h1>
<p>A multi-tenant REST service that runs organisations of autonomous software agents: companies hire
agents into an org chart and hand them work as issues; the service wakes each agent for a heartbeat
run (a local process, a coding-agent CLI such as Claude Code, an HTTP endpoint), and keeps comments,
documents, secrets, spend against budgets and an audit trail.</p>
<p class="muted">Version ${version}, <code>${mode}</code> mode. ${credentials}</p>

<h2>API</h2>
<ul>
<li><a href="/api/docs">Swagger UI</a>: every endpoint with its inputs, answers and who may call it; try them from the browser</li>
<li><a href="/api/openapi.json">OpenAPI document</a> (also <a href="/api/openapi.yaml">YAML</a>)</li>
<li><a href="/api/health">Health</a> (status, version, database), <a href="/api/health/ready">readiness</a>, <a href="/api/metrics">Prometheus metrics</a></li>
</ul>

<h2>Documentation</h2>
<p>In the repository: <code>README.md</code> (install, and a first agent in five minutes) and <code>docs/</code>:
<code>runtimes.md</code> (Claude Code, Codex, Gemini CLI, OpenCode and the other adapters),
<code>configuration.md</code> (environment variables), <code>cli.md</code> (the operator CLI <code>aos</code>),
<code>deployment.md</code>, <code>security.md</code>, and <code>api/</code> (one guide per domain).</p>

<h2>A board UI</h2>
<p>This service serves the API, not a board UI. A board UI is a single-page app that calls
<code>/api/…</code> of the server it is loaded from: serve its built files with a static server that
answers unknown paths with <code>index.html</code> and forwards <code>/api/</code> (HTTP and WebSocket
upgrades) to <code>${api}</code>. docs/deployment.md has an example.</p>
</body>
</html>
`;
}
