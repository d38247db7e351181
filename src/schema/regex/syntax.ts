/**
 * Shared bits of the regexp parser: Go's syntax error type and texts, and rune
 * decoding of pattern text.
 */

export class RegexSyntaxError extends Error {
  constructor(
    readonly code: string,
    readonly expr: string,
  ) {
    super(`error parsing regexp: ${code}: \`${expr}\``);
  }
}

export const ERR = {
  invalidCharRange: 'invalid character class range',
  invalidEscape: 'invalid escape sequence',
  invalidNamedCapture: 'invalid named capture',
  invalidPerlOp: 'invalid or unsupported Perl syntax',
  invalidRepeatOp: 'invalid nested repetition operator',
  invalidRepeatSize: 'invalid repeat count',
  missingBracket: 'missing closing ]',
  missingParen: 'missing closing )',
  missingRepeatArgument: 'missing argument to repetition operator',
  trailingBackslash: 'trailing backslash at end of expression',
  unexpectedParen: 'unexpected )',
  nestingDepth: 'expression nests too deeply',
  large: 'expression too large',
} as const;

/** Decodes the code point at s[i] (lone surrogates read as U+FFFD, as Go reads invalid UTF-8). */
export function runeAt(s: string, i: number): [number, number] {
  const cp = s.codePointAt(i) as number;
  if (cp >= 0xd800 && cp <= 0xdfff) return [0xfffd, 1];
  return [cp, cp > 0xffff ? 2 : 1];
}
