import { describe, expect, it } from 'vitest';
import { escapeHtml, html, interpolate, raw } from './html.ts';

describe('escapeHtml', () => {
  it('escapes the five characters that matter in content and quoted attributes', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe('&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
  });
});

describe('html', () => {
  it('escapes interpolated text by default', () => {
    const name = '<script>alert(1)</script>';
    expect(html`<p title="${name}">${name}</p>`.value).toBe('<p title="&lt;script&gt;alert(1)&lt;/script&gt;">&lt;script&gt;alert(1)&lt;/script&gt;</p>');
  });

  it('keeps nested fragments and raw markup, renders lists, and drops false, null and undefined', () => {
    const items = ['a<b', 'c'].map((x) => html`<li>${x}</li>`);
    expect(html`<ul>${items}</ul>${false}${null}${undefined}${raw('<hr>')}${0}`.value).toBe('<ul><li>a&lt;b</li><li>c</li></ul><hr>0');
  });
});

describe('interpolate', () => {
  it('escapes the template, inserts fragments as they are and text escaped', () => {
    const out = interpolate('Pay <{amount}> to {merchant} by {date}', { amount: html`<strong>5 €</strong>`, merchant: '<i>Evil</i>' });
    expect(out.value).toBe('Pay &lt;<strong>5 €</strong>&gt; to &lt;i&gt;Evil&lt;/i&gt; by {date}');
  });
});
