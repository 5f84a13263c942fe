// Turns lines of an echo run log into UI entries (served by GET /api/adapters/echo_external/ui-parser.js).
export function parseLine(line) {
  const m = /^echo (v\d+): (.*)$/.exec(line);
  return m ? { kind: 'message', version: m[1], text: m[2] } : { kind: 'raw', text: line };
}
