import sanitizeHtml from 'sanitize-html';

const SVG_TAGS = [
  'svg',
  'g',
  'defs',
  'title',
  'desc',
  'symbol',
  'use',
  'path',
  'rect',
  'circle',
  'ellipse',
  'line',
  'polyline',
  'polygon',
  'text',
  'tspan',
  'textPath',
  'linearGradient',
  'radialGradient',
  'stop',
  'clipPath',
  'mask',
  'pattern',
  'filter',
  'feGaussianBlur',
  'feOffset',
  'feBlend',
  'feColorMatrix',
  'feMerge',
  'feMergeNode',
  'feFlood',
  'feComposite',
  'marker',
];
const DRAWABLE = /<(path|rect|circle|ellipse|line|polyline|polygon|text|use|g)[\s/>]/i;

const SVG_ATTRS = [
  'xmlns',
  'xmlns:xlink',
  'version',
  'width',
  'height',
  'viewBox',
  'preserveAspectRatio',
  'x',
  'y',
  'x1',
  'x2',
  'y1',
  'y2',
  'cx',
  'cy',
  'r',
  'rx',
  'ry',
  'd',
  'points',
  'fill',
  'fill-opacity',
  'fill-rule',
  'stroke',
  'stroke-width',
  'stroke-linecap',
  'stroke-linejoin',
  'stroke-opacity',
  'stroke-dasharray',
  'opacity',
  'transform',
  'id',
  'class',
  'offset',
  'stop-color',
  'stop-opacity',
  'gradientUnits',
  'gradientTransform',
  'clip-path',
  'clip-rule',
  'mask',
  'font-family',
  'font-size',
  'font-weight',
  'text-anchor',
  'dominant-baseline',
  'letter-spacing',
  'dx',
  'dy',
  'patternUnits',
  'filter',
  'stdDeviation',
  'in',
  'in2',
  'result',
  'mode',
  'values',
  'type',
  'flood-color',
  'flood-opacity',
  'operator',
  'markerWidth',
  'markerHeight',
  'refX',
  'refY',
  'orient',
  'href',
  'xlink:href',
];

/**
 * Strips scripts, event handlers, foreign objects and every external reference from an SVG.
 * Returns undefined when nothing safe and drawable is left (the upload is then rejected).
 */
export function sanitizeSvg(input: string): string | undefined {
  if (!/<svg[\s>]/i.test(input)) return undefined;
  const clean = sanitizeHtml(input, {
    allowedTags: SVG_TAGS,
    allowedAttributes: { '*': SVG_ATTRS },
    allowedSchemes: [],
    allowedSchemesAppliedToAttributes: [],
    allowProtocolRelative: false,
    disallowedTagsMode: 'discard',
    nonTextTags: ['script', 'style', 'foreignObject', 'iframe', 'object', 'embed', 'noscript'],
    parser: { lowerCaseTags: false, lowerCaseAttributeNames: false, xmlMode: true },
    exclusiveFilter: (frame) => frame.tag === 'use' && !String(frame.attribs.href ?? frame.attribs['xlink:href'] ?? '').startsWith('#'),
    transformTags: {
      '*': (tagName, attribs) => {
        const out: Record<string, string> = {};
        for (const [k, v] of Object.entries(attribs)) {
          // only fragment references; no external links, no javascript:, no data: URLs
          if ((k === 'href' || k === 'xlink:href') && !v.startsWith('#')) continue;
          if (/url\(\s*['"]?(?!#)/i.test(v)) continue;
          out[k] = v;
        }
        return { tagName, attribs: out };
      },
    },
  }).trim();
  if (!/^<svg[\s>]/i.test(clean) || !DRAWABLE.test(clean)) return undefined;
  return clean;
}
