// The style a merchant may give the fields: a small whitelist of properties, each value checked against a strict
// pattern, never CSS text. Pure (no DOM): the library checks the merchant's options with it, and each field frame
// checks again what it receives before setting the values as CSS custom properties of its own stylesheet.

/** The properties a merchant may set, as the merchant names them. */
export interface FieldStyle {
  /** Text colour: #rgb, #rrggbb, #rrggbbaa, rgb(r, g, b) or rgba(r, g, b, a). */
  readonly color?: string;
  /** Background colour of the field, same forms as color. */
  readonly backgroundColor?: string;
  /** 8–40 px, or 0.5–2.5 rem/em. */
  readonly fontSize?: string;
  /** One of {@link FONT_FAMILIES}. */
  readonly fontFamily?: string;
  /** normal, bold, or 100–900 in hundreds. */
  readonly fontWeight?: string;
  /** normal, or -2–10 px, or -0.2–0.5 em. */
  readonly letterSpacing?: string;
  /** Colour of the placeholder text. */
  readonly placeholderColor?: string;
  /** Text colour while the value is invalid. */
  readonly invalidColor?: string;
}

/** The font families offered: the system stacks and fonts every platform has (no web font is fetched). */
export const FONT_FAMILIES: Readonly<Record<string, string>> = {
  'system-ui': 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
  'sans-serif': 'sans-serif',
  serif: 'serif',
  monospace: 'ui-monospace, Menlo, Consolas, monospace',
  Arial: 'Arial, Helvetica, sans-serif',
  Helvetica: 'Helvetica, Arial, sans-serif',
  Georgia: 'Georgia, serif',
  Verdana: 'Verdana, sans-serif',
  'Times New Roman': '"Times New Roman", Times, serif',
  'Courier New': '"Courier New", Courier, monospace',
};

const BYTE = '(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const ALPHA = '(0|1|0?\\.\\d{1,3}|1\\.0{1,3})';
const COLOR = new RegExp(`^(#[0-9a-fA-F]{3}|#[0-9a-fA-F]{6}|#[0-9a-fA-F]{8}|rgb\\(${BYTE}, ?${BYTE}, ?${BYTE}\\)|rgba\\(${BYTE}, ?${BYTE}, ?${BYTE}, ?${ALPHA}\\))$`);

function inRange(value: string, pattern: RegExp, ranges: Readonly<Record<string, readonly [number, number]>>): boolean {
  const m = pattern.exec(value);
  if (!m) return false;
  const range = ranges[m[2]!];
  const n = Number(m[1]);
  return range !== undefined && n >= range[0] && n <= range[1];
}

const LENGTH = /^(-?\d{1,2}(?:\.\d{1,2})?)(px|rem|em)$/;

/** One check per property: true when the value is allowed. */
const CHECKS: Readonly<Record<keyof FieldStyle, (value: string) => boolean>> = {
  color: (v) => COLOR.test(v),
  backgroundColor: (v) => COLOR.test(v),
  placeholderColor: (v) => COLOR.test(v),
  invalidColor: (v) => COLOR.test(v),
  fontSize: (v) => inRange(v, LENGTH, { px: [8, 40], rem: [0.5, 2.5], em: [0.5, 2.5] }),
  fontFamily: (v) => Object.hasOwn(FONT_FAMILIES, v),
  fontWeight: (v) => /^(normal|bold|[1-9]00)$/.test(v),
  letterSpacing: (v) => v === 'normal' || inRange(v, LENGTH, { px: [-2, 10], em: [-0.2, 0.5] }),
};

/** The CSS custom property of each style property, as the frame's stylesheet reads it. */
export const STYLE_VARIABLES: Readonly<Record<keyof FieldStyle, string>> = {
  color: '--cf-color',
  backgroundColor: '--cf-background',
  fontSize: '--cf-font-size',
  fontFamily: '--cf-font-family',
  fontWeight: '--cf-font-weight',
  letterSpacing: '--cf-letter-spacing',
  placeholderColor: '--cf-placeholder',
  invalidColor: '--cf-invalid',
};

/** Thrown by {@link checkStyle}: names the property and the forms it takes. */
export class FieldStyleError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FieldStyleError';
  }
}

/**
 * Checks a merchant's style object; answers the allowed properties as strings.
 * @throws FieldStyleError for an unknown property, a value that is not a string, or a value outside its pattern.
 */
export function checkStyle(style: unknown): FieldStyle {
  if (style === undefined || style === null) return {};
  if (typeof style !== 'object' || Array.isArray(style)) throw new FieldStyleError('style must be an object of whitelisted properties, e.g. { color: "#1a1a1a", fontSize: "16px" }.');
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(style)) {
    if (!Object.hasOwn(CHECKS, key)) throw new FieldStyleError(`style.${key} is not supported; the fields take only ${Object.keys(CHECKS).join(', ')}.`);
    if (typeof value !== 'string' || value.length > 64 || !CHECKS[key as keyof FieldStyle](value)) {
      const hint = key === 'fontFamily' ? `one of ${Object.keys(FONT_FAMILIES).join(', ')}` : key.endsWith('olor') ? 'a colour as #rrggbb or rgb(r, g, b)' : 'a value in the documented range';
      throw new FieldStyleError(`style.${key} must be ${hint}; got ${JSON.stringify(value).slice(0, 70)}.`);
    }
    out[key] = value;
  }
  return out;
}

/** The custom properties (name, CSS value) a checked style sets in a frame. */
export function styleVariables(style: FieldStyle): Array<[string, string]> {
  const vars: Array<[string, string]> = [];
  for (const [key, value] of Object.entries(style) as Array<[keyof FieldStyle, string]>) {
    vars.push([STYLE_VARIABLES[key], key === 'fontFamily' ? FONT_FAMILIES[value]! : value]);
  }
  return vars;
}
