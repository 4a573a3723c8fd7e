// The style whitelist: known properties with strictly patterned values; anything else refused with a hint.
import { describe, expect, it } from 'vitest';
import { checkStyle, FieldStyleError, styleVariables } from './style.ts';

describe('checkStyle', () => {
  it('accepts the whitelisted properties in their documented forms', () => {
    const style = {
      color: '#1a1a1a',
      backgroundColor: 'rgba(255, 255, 255, 0.5)',
      fontSize: '16px',
      fontFamily: 'Georgia',
      fontWeight: '600',
      letterSpacing: '0.02em',
      placeholderColor: 'rgb(89,89,89)',
      invalidColor: '#b00020ff',
    };
    expect(checkStyle(style)).toEqual(style);
    expect(checkStyle(undefined)).toEqual({});
    expect(checkStyle({ fontSize: '1.25rem', letterSpacing: 'normal', fontWeight: 'bold', color: '#fff' })).toEqual({ fontSize: '1.25rem', letterSpacing: 'normal', fontWeight: 'bold', color: '#fff' });
  });

  it.each([
    ['an unknown property', { background: 'red' }, /style.background is not supported/],
    ['CSS text in a colour', { color: 'red; background: url(https://evil.example/x)' }, /style.color must be a colour/],
    ['a named colour', { color: 'red' }, /style.color/],
    ['url() in a colour', { color: 'url(x)' }, /style.color/],
    ['an expression in a size', { fontSize: 'calc(100px + 1em)' }, /style.fontSize/],
    ['a size out of range', { fontSize: '400px' }, /style.fontSize/],
    ['an unknown unit', { fontSize: '16vh' }, /style.fontSize/],
    ['a font not in the list', { fontFamily: 'Comic Sans MS' }, /one of system-ui/],
    ['a font stack written out', { fontFamily: 'Arial, "x"' }, /style.fontFamily/],
    ['a weight off the hundreds', { fontWeight: '450' }, /style.fontWeight/],
    ['a number instead of a string', { fontSize: 16 }, /style.fontSize/],
    ['an rgb byte above 255', { color: 'rgb(256, 0, 0)' }, /style.color/],
    ['a custom property', { '--cf-color': '#000' }, /not supported/],
    ['a prototype key', JSON.parse('{"__proto__": {"color": "#000"}}'), /not supported/],
  ])('refuses %s', (_name, style, message) => {
    expect(() => checkStyle(style)).toThrow(FieldStyleError);
    expect(() => checkStyle(style)).toThrow(message);
  });

  it('refuses CSS text and other shapes outright', () => {
    expect(() => checkStyle('color: red')).toThrow(FieldStyleError);
    expect(() => checkStyle([{ color: '#000' }])).toThrow(FieldStyleError);
  });
});

describe('styleVariables', () => {
  it('maps checked values to the frame stylesheet\'s custom properties, font names to their stacks', () => {
    expect(styleVariables({ color: '#111', fontFamily: 'Courier New', placeholderColor: '#595959' })).toEqual([
      ['--cf-color', '#111'],
      ['--cf-font-family', '"Courier New", Courier, monospace'],
      ['--cf-placeholder', '#595959'],
    ]);
  });
});
