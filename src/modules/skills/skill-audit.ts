import { contentHashOf, MAX_SUPPORTING_FILE_BYTES, parseSkillMd, SKILL_MD, SkillMdError, StoredSkillFile } from './skill-files';

/**
 * The skill audit: a static scan of a skill's files. `fail` is a hard stop (install-update refuses
 * it even with force); `warning` is shown but allowed.
 *
 * fail:    missing_skill_md, invalid_skill_md, remote_fetch_execute, secret_exfiltration,
 *          oversized_file, non_text_file, path_outside_tree
 * warning: shipped_script, network_command, origin_drift
 */
export const AUDIT_SCAN_VERSION = 'skill-audit/1';

export type AuditVerdict = 'pass' | 'warning' | 'fail';

export const FAIL_CODES = [
  'missing_skill_md',
  'invalid_skill_md',
  'remote_fetch_execute',
  'secret_exfiltration',
  'oversized_file',
  'non_text_file',
  'path_outside_tree',
] as const;
export const WARNING_CODES = ['shipped_script', 'network_command', 'origin_drift'] as const;
export type AuditCode = (typeof FAIL_CODES)[number] | (typeof WARNING_CODES)[number];

export interface AuditFinding {
  code: AuditCode;
  severity: 'fail' | 'warning';
  path: string | null;
  line: number | null;
  message: string;
}

export interface AuditResult {
  verdict: AuditVerdict;
  codes: AuditCode[];
  findings: AuditFinding[];
  installedHash: string;
  originHash: string | null;
  scanVersion: string;
  auditedAt: string;
}

/** Problems found while reading a source (paths out of the tree, symlinks leaving it). */
export interface SourceProblem {
  code: 'path_outside_tree';
  path: string;
  message: string;
}

// The service's own API, reached with the run's own token, is not a network destination to flag.
const SERVICE_URL_VAR = /\$\{?SERVICE_API_URL\}?/g;
const SERVICE_KEY_VAR = /\$\{?SERVICE_API_KEY\}?/g;
const mentionsServiceUrl = (line: string): boolean => /\$\{?SERVICE_API_URL\}?/.test(line);

const NET_TOOL = String.raw`(?:curl|wget|nc|ncat|netcat|socat|telnet|scp|rsync|sftp|httpie|aria2c|invoke-webrequest|invoke-restmethod|iwr|irm)`;
const NET_COMMAND = new RegExp(String.raw`(?:^|[\s;&|(\x60"'$])${NET_TOOL}(?=\s|$)`, 'i');
const NET_CALL_IN_CODE =
  /\b(?:requests\.(?:get|post|put)|urllib\.request|fetch\s*\(|axios\.|http\.request|socket\.connect|new\s+WebSocket)/i;

/** Download piped into, or substituted into, an interpreter. */
const FETCH_EXECUTE: RegExp[] = [
  new RegExp(
    String.raw`\b(?:curl|wget|fetch|iwr|invoke-webrequest|irm|invoke-restmethod)\b[^\n|]*\|\s*(?:sudo\s+)?(?:-?\w+=\S+\s+)*(?:sh|bash|zsh|dash|ksh|fish|python\d?(?:\.\d+)?|perl|ruby|node|php|pwsh|powershell|iex|invoke-expression|source)\b`,
    'i',
  ),
  /\b(?:sh|bash|zsh|dash|ksh|python\d?|perl|ruby|node|source|\.)\s+<\(\s*(?:curl|wget)\b/i,
  /\b(?:sh|bash|zsh|dash|ksh)\s+-c\s+["']?\$\(\s*(?:curl|wget)\b/i,
  /\beval\s+["']?\$\(\s*(?:curl|wget)\b/i,
  /\b(?:iex|invoke-expression)\b[^\n]*(?:downloadstring|iwr|invoke-webrequest|irm|invoke-restmethod|net\.webclient)/i,
  /\b(?:downloadstring|invoke-webrequest|iwr|irm)\b[^\n]*\|\s*(?:iex|invoke-expression)\b/i,
  /\bpython\d?\s+-c\s+["'][^"'\n]*urlopen\([^\n]*exec\(/i,
];

/** Things that hold secrets: the environment, key and credential files. */
const SECRET_SOURCE: RegExp[] = [
  /\$\{?[A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)[A-Z0-9_]*\}?/,
  /(?:^|[\s;&|($\x60])(?:env|printenv|set)(?=\s*(?:\||>|$|;|\)))/,
  /\/proc\/(?:self|\d+)\/environ/,
  /~?\/?\.ssh\/|\bid_(?:rsa|dsa|ecdsa|ed25519)\b/,
  /\.aws\/credentials|\.netrc\b|\.npmrc\b|\.pypirc\b|\.docker\/config\.json|\.kube\/config|\.git-credentials/,
  /(?:^|[\s/'"])\.env(?:\.[a-z]+)?(?=[\s'"]|$)/,
  /\bos\.environ\b|\bprocess\.env\b/,
];

const SCRIPT_EXT = /\.(?:sh|bash|zsh|py|js|mjs|cjs|ts|rb|pl|php|ps1|bat|cmd)$/i;

function lineOf(text: string, index: number): number {
  let n = 1;
  for (let i = 0; i < index && i < text.length; i++) if (text.charCodeAt(i) === 10) n++;
  return n;
}

/** Logical lines: shell continuations (`\` at end of line) joined, with the first line's number. */
function logicalLines(text: string): Array<{ text: string; line: number }> {
  const out: Array<{ text: string; line: number }> = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    let l = lines[i];
    const start = i + 1;
    while (/\\\s*$/.test(l) && i + 1 < lines.length) l = l.replace(/\\\s*$/, ' ') + lines[++i];
    out.push({ text: l, line: start });
  }
  return out;
}

/** A line that talks to the network somewhere other than the service's own API. */
function externalNetworkUse(line: string, isCode: boolean): boolean {
  const rest = line.replace(SERVICE_URL_VAR, '');
  const hasTool = NET_COMMAND.test(rest) || (isCode && NET_CALL_IN_CODE.test(rest));
  if (!hasTool) return false;
  // the only destination is the service API: not an external network reference
  if (mentionsServiceUrl(line) && !/\b(?:https?|ftp|wss?):\/\//i.test(rest)) return false;
  return true;
}

function secretSourceIn(line: string): boolean {
  // the run's own key sent to the service's own API is how agents authenticate
  const rest = mentionsServiceUrl(line) ? line.replace(SERVICE_KEY_VAR, '') : line;
  return SECRET_SOURCE.some((r) => r.test(rest));
}

/** Scans the stored files of a skill. `originHash`: the hash it was installed at (drift is a warning). */
export function auditSkill(
  files: StoredSkillFile[],
  opts: { originHash?: string | null; sourceProblems?: SourceProblem[] } = {},
): AuditResult {
  const findings: AuditFinding[] = [];
  const add = (code: AuditCode, severity: 'fail' | 'warning', path: string | null, line: number | null, message: string) =>
    findings.push({ code, severity, path, line, message });

  for (const p of opts.sourceProblems ?? []) add(p.code, 'fail', p.path, null, p.message);
  const skillMd = files.find((f) => f.path === SKILL_MD);
  if (!skillMd) add('missing_skill_md', 'fail', SKILL_MD, null, 'The skill has no SKILL.md');
  else if (skillMd.content === null) add('invalid_skill_md', 'fail', SKILL_MD, null, 'SKILL.md is not UTF-8 text');
  else {
    try {
      parseSkillMd(skillMd.content);
    } catch (err) {
      if (!(err instanceof SkillMdError)) throw err;
      add('invalid_skill_md', 'fail', SKILL_MD, null, err.message);
    }
  }

  for (const f of files) {
    if (f.content === null) {
      if (f.kind !== 'skill' && f.sizeBytes > MAX_SUPPORTING_FILE_BYTES) {
        add('oversized_file', 'fail', f.path, null, `${f.path} is ${f.sizeBytes} bytes (limit ${MAX_SUPPORTING_FILE_BYTES})`);
      } else if (f.kind !== 'skill') add('non_text_file', 'fail', f.path, null, `${f.path} is not UTF-8 text`);
      continue;
    }
    const isCode = f.kind === 'script' || SCRIPT_EXT.test(f.path);
    if (f.kind === 'script') add('shipped_script', 'warning', f.path, null, `${f.path} is a script shipped with the skill`);
    const text = f.content;
    for (const re of FETCH_EXECUTE) {
      const m = re.exec(text);
      if (m) {
        add(
          'remote_fetch_execute',
          'fail',
          f.path,
          lineOf(text, m.index),
          `${f.path}: downloads code and executes it (${m[0].trim().slice(0, 80)})`,
        );
        break;
      }
    }
    let netReported = false;
    for (const { text: l, line } of logicalLines(text)) {
      const external = externalNetworkUse(l, isCode);
      if (!external) continue;
      if (secretSourceIn(l)) {
        add('secret_exfiltration', 'fail', f.path, line, `${f.path}:${line}: sends environment values or key files over the network`);
      } else if (!netReported) {
        netReported = true;
        add('network_command', 'warning', f.path, line, `${f.path}:${line}: references a network command`);
      }
    }
    // `env | curl …` split over a pipe on one line is caught above; a whole-file upload of the environment too
    if (
      /\b(?:env|printenv)\b[^\n]*\|\s*(?:curl|wget|nc|ncat|netcat)\b/i.test(text) &&
      !findings.some((x) => x.code === 'secret_exfiltration' && x.path === f.path)
    ) {
      add('secret_exfiltration', 'fail', f.path, null, `${f.path}: pipes the environment to a network command`);
    }
  }

  const installedHash = contentHashOf(files);
  const originHash = opts.originHash ?? null;
  if (originHash && originHash !== installedHash)
    add('origin_drift', 'warning', null, null, 'The files differ from the version they were installed at');

  const codes = [...new Set(findings.map((f) => f.code))];
  const verdict: AuditVerdict = findings.some((f) => f.severity === 'fail') ? 'fail' : findings.length ? 'warning' : 'pass';
  return { verdict, codes, findings, installedHash, originHash, scanVersion: AUDIT_SCAN_VERSION, auditedAt: new Date().toISOString() };
}
