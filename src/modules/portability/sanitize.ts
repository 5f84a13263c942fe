import { isSecretRef } from '../secrets/secret-ref';
import type { EnvDeclaration, Json, PackageEnv } from './package-format';

/**
 * What never leaves a company in a package: secret values (secret references become declarations
 * by name), inline values of sensitive-looking keys (dropped with a warning), and, as a last net,
 * any occurrence of a company secret's value in any exported file (redacted with a warning).
 */

const SENSITIVE_KEY =
  /(api[-_]?key|apikey|token|secret|password|passwd|pwd|credential|private[-_]?key|auth|cookie|session|bearer|signature)/i;

export const isSensitiveKey = (key: string): boolean => SENSITIVE_KEY.test(key);

export class ExportScrubber {
  readonly warnings: string[] = [];
  /** secret names the package declares (referenced by some exported env) */
  readonly declared = new Set<string>();

  constructor(private readonly secretNames: Map<string, string>) {}

  /** An env map: secret refs -> declarations, sensitive inline values dropped, plain values kept. */
  env(file: string, field: string, env: unknown): PackageEnv {
    const out: PackageEnv = {};
    if (!env || typeof env !== 'object' || Array.isArray(env)) return out;
    for (const [k, v] of Object.entries(env as Json)) {
      if (isSecretRef(v)) {
        const decl = this.declaration(file, `${field}.${k}`, v);
        if (decl) out[k] = decl;
      } else if (typeof v === 'string') {
        if (isSensitiveKey(k) && v !== '')
          this.warnings.push(`${file}: ${field}.${k}: inline sensitive value dropped; set it as a secret after import`);
        else out[k] = v;
      } else if (typeof v === 'number' || typeof v === 'boolean') out[k] = String(v);
    }
    return out;
  }

  /** Any other configuration: same rules, recursively (secret refs anywhere become declarations). */
  deep(file: string, field: string, value: unknown): unknown {
    if (Array.isArray(value)) return value.map((v, i) => this.deep(file, `${field}[${i}]`, v));
    if (isSecretRef(value)) return this.declaration(file, field, value) ?? undefined;
    if (!value || typeof value !== 'object') return value;
    const out: Json = {};
    for (const [k, v] of Object.entries(value as Json)) {
      if (k === 'env' && v && typeof v === 'object' && !Array.isArray(v)) {
        out[k] = this.env(file, `${field}.${k}`, v);
        continue;
      }
      if (typeof v === 'string' && isSensitiveKey(k) && v !== '') {
        this.warnings.push(`${file}: ${field}.${k}: inline sensitive value dropped`);
        continue;
      }
      const scrubbed = this.deep(file, `${field}.${k}`, v);
      if (scrubbed !== undefined) out[k] = scrubbed;
    }
    return out;
  }

  private declaration(file: string, field: string, ref: { secretId: string }): EnvDeclaration | null {
    const name = this.secretNames.get(ref.secretId);
    if (!name) {
      this.warnings.push(`${file}: ${field}: reference to a deleted secret dropped`);
      return null;
    }
    this.declared.add(name);
    return { kind: 'secret', secret: name };
  }
}

/** Last net: redacts every occurrence of a secret value (4+ characters) in the files. */
export function redactValues(files: Record<string, string>, values: string[], warnings: string[]): void {
  const needles = [...new Set(values.filter((v) => v.length >= 4).flatMap((v) => [v, JSON.stringify(v).slice(1, -1)]))];
  if (!needles.length) return;
  for (const [path, content] of Object.entries(files)) {
    let text = content;
    for (const v of needles) if (text.includes(v)) text = text.split(v).join('[redacted]');
    if (text !== content) {
      files[path] = text;
      warnings.push(`${path}: a secret value found in the text was redacted`);
    }
  }
}
