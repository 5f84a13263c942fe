import { MAX_TITLE, planItems } from '../../src/modules/documents/plan-items';

describe('planItems', () => {
  it('takes top-level bullets, numbers and task boxes in order, nested lines as description', () => {
    const md = [
      '# Plan',
      '',
      'We will do this:',
      '',
      '- [ ] Write the migration',
      '  - add the table',
      '  - add the index',
      '* Build the **service**',
      '1. Test it',
      '2) Ship it',
      '',
      'Notes after the list are not tasks.',
    ].join('\n');
    expect(planItems(md)).toEqual([
      { title: 'Write the migration', description: '- add the table\n- add the index' },
      { title: 'Build the **service**', description: null },
      { title: 'Test it', description: null },
      { title: 'Ship it', description: null },
    ]);
  });

  it('never takes list lines inside fenced code, nor empty items', () => {
    expect(planItems('```\n- not a task\n```\n- \n+ real')).toEqual([{ title: 'real', description: null }]);
  });

  it('shortens overlong titles', () => {
    const [item] = planItems(`- ${'x'.repeat(MAX_TITLE + 50)}`);
    expect(item.title).toHaveLength(MAX_TITLE);
  });

  it('finds nothing in prose', () => {
    expect(planItems('Just a paragraph.\n\nAnother one.')).toEqual([]);
  });
});
