/** True when the digits pass the Luhn (mod 10) check. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return digits.length > 0 && sum % 10 === 0;
}

/** A run of digits, single spaces or dashes allowed between them: where a card number may hide. */
const DIGIT_RUN = /\d(?:[ -]?\d)*/g;

/**
 * Text with every card number in it cut to its last four digits ("••••4242"): 13 to 19 digits that
 * pass the Luhn check, also inside a longer run of digits ("4242… 987", a number and its expiry and
 * CVC typed together). For anything that echoes what a caller sent (an error message, a parameter's
 * name): a number sent where an id belongs must not come back whole.
 */
export function maskCardNumbers(text: string): string {
  return text.replace(DIGIT_RUN, (run) => {
    // Positions of the digits in the run, so that a number found among them is cut in place.
    const at: number[] = [];
    for (let i = 0; i < run.length; i++) if (run[i] !== ' ' && run[i] !== '-') at.push(i);
    if (at.length < 13) return run;
    const digits = at.map((i) => run[i]).join('');
    const hidden = new Array<boolean>(digits.length).fill(false);
    // Where a number may start or end: at the edges of the groups the separators make ("4242… 987" is
    // a 16 and a 3), and, in a group of more than 19 digits, also 13 to 19 digits from either of its
    // edges ("…4242" glued to "1229"). A group of 13 to 19 digits that fails the check is kept whole:
    // it is a number of that length, not a card number with digits around it.
    const edges = new Set<number>([0, digits.length]);
    let count = 0;
    for (let i = 0; i < run.length; i++) {
      if (run[i] === ' ' || run[i] === '-') edges.add(count);
      else count += 1;
    }
    const sorted = [...edges].sort((a, b) => a - b);
    const windows: Array<[number, number]> = [];
    for (const start of sorted) for (const end of sorted) if (end - start >= 13 && end - start <= 19) windows.push([start, end]);
    for (let g = 0; g + 1 < sorted.length; g++) {
      const [from, to] = [sorted[g]!, sorted[g + 1]!];
      if (to - from <= 19) continue;
      for (let length = 19; length >= 13; length--) windows.push([from, from + length], [to - length, to]);
    }
    // Longest first, so that a whole number is found before a shorter valid part of it.
    windows.sort((a, b) => b[1] - b[0] - (a[1] - a[0]));
    for (const [start, end] of windows) {
      if (hidden[start] || !luhnValid(digits.slice(start, end))) continue;
      for (let k = start; k < end - 4; k++) hidden[k] = true;
    }
    if (!hidden.includes(true)) return run;
    let out = '';
    let d = 0;
    for (let i = 0; i < run.length; i++) {
      if (run[i] === ' ' || run[i] === '-') {
        if (!(d > 0 && hidden[d - 1])) out += run[i];
        continue;
      }
      if (hidden[d]) {
        if (d === 0 || !hidden[d - 1]) out += '••••';
      } else {
        out += run[i];
      }
      d += 1;
    }
    return out;
  });
}
