import * as ts from 'typescript';
import { parse, tsFiles } from '../support/source-files';

/**
 * Every Nest module says what it owns: the class a `*.module.ts` decorates with `@Module` carries a
 * doc comment (`/** … *\/` right above its decorators), one or two lines naming its area, its
 * tables and the ports it declares or fills. The reader of app.module.ts's list can then tell the
 * modules apart without opening their folders.
 */
const MIN_TEXT = 30;

/** The `@Module` classes of a file, each with the text of the doc comment above it ('' when none). */
function moduleClasses(file: string): Array<{ name: string; doc: string }> {
  const source = parse(file);
  return source.statements
    .filter(
      (s): s is ts.ClassDeclaration =>
        ts.isClassDeclaration(s) && !!ts.getDecorators(s)?.some((d) => /^Module\b/.test(d.expression.getText(source))),
    )
    .map((cls) => {
      const docs = (ts.getLeadingCommentRanges(source.text, cls.getFullStart()) ?? [])
        .map((r) => source.text.slice(r.pos, r.end))
        .filter((c) => c.startsWith('/**'));
      const doc = (docs.pop() ?? '')
        .replace(/^\/\*\*|\*\/$/g, '')
        .replace(/^\s*\* ?/gm, '')
        .trim();
      return { name: cls.name?.text ?? '(anonymous)', doc };
    });
}

describe('module headers', () => {
  const files = tsFiles('src').filter((f) => f.endsWith('.module.ts'));

  it('finds the modules', () => {
    expect(files.length).toBeGreaterThan(40);
    expect(files.filter((f) => moduleClasses(f).length === 0)).toEqual([]);
  });

  it('gives every @Module class a doc comment saying what it owns', () => {
    const missing = files.flatMap((f) =>
      moduleClasses(f)
        .filter((m) => m.doc.length < MIN_TEXT)
        .map((m) => `${f} ${m.name}`),
    );
    expect(missing).toEqual([]);
  });
});
