import { invalid, type DomainErrorCode } from './domain-error.ts';

/**
 * Checks merchant-supplied text: 1 to max Unicode code points, well-formed
 * (no lone surrogates) and free of NUL, which Postgres text cannot hold.
 * @throws DomainError with the given code when the text breaks a rule.
 */
export function parseText(value: string, param: string, code: DomainErrorCode, max = 255): string {
  if (value.length === 0) throw invalid('request.parameter_missing', param, `${param} is required and must not be empty.`);
  if (!value.isWellFormed() || value.includes('\u0000')) {
    throw invalid(code, param, `${param} must be valid Unicode text without NUL characters.`);
  }
  let points = 0;
  for (const _ of value) if (++points > max) break;
  if (points > max) throw invalid(code, param, `${param} must be at most ${max} characters.`);
  return value;
}
