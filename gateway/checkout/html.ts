/** A fragment of HTML that is already safe to emit as is. */
export class SafeHtml {
  readonly value: string;

  constructor(value: string) {
    this.value = value;
  }

  toString(): string {
    return this.value;
  }
}

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => ESCAPES[ch]!);
}

/** Marks trusted markup (a constant, or output of {@link html}) as safe. Never pass outside input. */
export function raw(markup: string): SafeHtml {
  return new SafeHtml(markup);
}

/** Interpolated values: escaped text, trusted fragments, lists of them, or nothing. */
export type HtmlValue = SafeHtml | string | number | bigint | boolean | null | undefined | readonly HtmlValue[];

function render(value: HtmlValue): string {
  if (value instanceof SafeHtml) return value.value;
  if (value === null || value === undefined || value === false) return '';
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

/**
 * Tagged template that escapes every interpolated value unless it is a
 * {@link SafeHtml}; `false`, `null` and `undefined` render as nothing, so
 * `${cond && html`…`}` works. Attribute values must still be quoted in the template.
 */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]!;
  return new SafeHtml(out);
}

/**
 * Fills `{name}` placeholders of a plain-text template (a catalogue message)
 * with values that may be markup: the template's text is escaped, values
 * render as in {@link html}. Unknown placeholders are left as they are.
 */
export function interpolate(template: string, values: Readonly<Record<string, HtmlValue>>): SafeHtml {
  const out = template.split(/\{(\w+)\}/).map((part, i) => {
    if (i % 2 === 0) return escapeHtml(part);
    return part in values ? render(values[part]) : escapeHtml(`{${part}}`);
  });
  return new SafeHtml(out.join(''));
}
