import { urlKeyOf } from '../../common/http/url-key';

/** Shortname of a project name (`My App!` -> `my-app`). */
export const toUrlKey = (name: string): string => urlKeyOf(name, 'project');

/** Palette a project colour is taken from when none is given (rotating per company). */
export const PROJECT_PALETTE = [
  '#6366f1',
  '#0ea5e9',
  '#10b981',
  '#f59e0b',
  '#ef4444',
  '#8b5cf6',
  '#ec4899',
  '#14b8a6',
  '#f97316',
  '#84cc16',
];
