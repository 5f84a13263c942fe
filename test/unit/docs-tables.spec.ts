import { readFileSync } from 'node:fs';
import { FOREIGN_READS, TABLE_OWNERS } from '../../src/database/table-owners';
import { folderGraph, layers, renderModuleMap } from '../support/import-graph';
import { ports, registrations, renderPorts } from '../support/ports';

const tables = require('../../scripts/docs-tables.js') as {
  DOC: string;
  render(owners: unknown, foreignReads: unknown): string;
  loadOwners(): { owners: unknown; foreignReads: unknown };
  committedSection(doc: string, name?: string): string | null;
};

/** docs/architecture.md's ownership table is generated from src/database/table-owners.ts (`npm run docs:tables`). */
describe('docs: table ownership', () => {
  it('reads the map the service uses', () => {
    const loaded = tables.loadOwners();
    expect(loaded.owners).toEqual(TABLE_OWNERS);
    expect(loaded.foreignReads).toEqual(FOREIGN_READS);
  });

  it('names every table once', () => {
    const rendered = tables.render(TABLE_OWNERS, FOREIGN_READS).split('Reads of another')[0];
    for (const table of Object.keys(TABLE_OWNERS)) expect(rendered.match(new RegExp(`\`${table}\``, 'g'))?.length).toBe(1);
  });

  it('is the committed section of docs/architecture.md (run `npm run docs:tables` after changing the map)', () => {
    const committed = tables.committedSection(readFileSync(tables.DOC, 'utf8'));
    expect(committed).toBe(tables.render(TABLE_OWNERS, FOREIGN_READS));
  });
});

/** docs/architecture.md's module map is generated from the import graph of src (`npm run docs:tables`). */
describe('docs: module map', () => {
  it('is the committed section of docs/architecture.md (run `npm run docs:tables` after changing imports between folders)', () => {
    const committed = tables.committedSection(readFileSync(tables.DOC, 'utf8'), 'module-map');
    expect(committed).toBe(renderModuleMap(layers(folderGraph())));
  });
});

/** docs/architecture.md's Ports table is generated from the port files and their registrations (`npm run docs:tables`). */
describe('docs: ports', () => {
  it('is the committed section of docs/architecture.md (run `npm run docs:tables` after adding or registering a port)', () => {
    const committed = tables.committedSection(readFileSync(tables.DOC, 'utf8'), 'ports');
    expect(committed).toBe(renderPorts(ports(), registrations()));
  });
});
