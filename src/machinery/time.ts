/**
 * Kubernetes timestamps: metav1.Time (RFC 3339, seconds, UTC: `2006-01-02T15:04:05Z`),
 * metav1.MicroTime (`2006-01-02T15:04:05.000000Z`), and parsing with the errors
 * Go's time.Parse(time.RFC3339, s) gives (what metav1.Time's JSON decoding reports).
 */

let lastSecond = NaN;
let lastText = '';

/** metav1.Time's wire format for `date` (remembered for the current second: every write stamps one). */
export function toRfc3339(date: Date): string {
  const second = Math.floor(date.getTime() / 1000);
  if (second !== lastSecond) {
    lastText = date.toISOString().slice(0, 19) + 'Z';
    lastSecond = second;
  }
  return lastText;
}

export function rfc3339Now(): string {
  return toRfc3339(new Date());
}

/** metav1.MicroTime's wire format (JS dates have milliseconds, so the last three digits are 0). */
export function toMicroTime(date: Date): string {
  return date.toISOString().slice(0, 23) + '000Z';
}

export function microTimeNow(): string {
  return toMicroTime(new Date());
}

const RFC3339 = '2006-01-02T15:04:05Z07:00';

/**
 * time.Parse(time.RFC3339, value): the instant, or an Error whose message is Go's
 * (`parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006"`).
 * Fractional seconds are accepted (as Go does) and kept to the millisecond.
 */
export function parseRfc3339(value: string): Date {
  const p = new TimeParser(value);
  return p.parse();
}

class TimeParser {
  private rest: string;

  constructor(private readonly value: string) {
    this.rest = value;
  }

  parse(): Date {
    const year = this.longYear();
    this.literal('-');
    const month = this.num('01', true);
    if (month < 1 || month > 12) this.rangeError('month');
    this.literal('-');
    const day = this.num('02', true);
    this.literal('T');
    const hour = this.num('15', false);
    if (hour >= 24) this.rangeError('hour');
    this.literal(':');
    const min = this.num('04', true);
    if (min >= 60) this.rangeError('minute');
    this.literal(':');
    const sec = this.num('05', true);
    if (sec >= 60) this.rangeError('second');
    let ms = 0;
    const frac = /^[.,]([0-9]+)/.exec(this.rest);
    if (frac) {
      ms = Number(frac[1].slice(0, 3).padEnd(3, '0'));
      this.rest = this.rest.slice(frac[0].length);
    }
    const offset = this.zone();
    if (this.rest.length) this.fail('', this.rest, `: extra text: ${goTimeQuote(this.rest)}`);
    if (day < 1 || day > daysIn(month, year)) this.fail('', this.rest, ': day out of range');
    // setUTCFullYear, unlike Date.UTC, does not map years 0..99 to 1900..1999.
    const d = new Date(0);
    d.setUTCFullYear(year, month - 1, day);
    d.setUTCHours(hour, min, sec, ms);
    return new Date(d.getTime() - offset * 1000);
  }

  private longYear(): number {
    const s = this.rest;
    if (s.length < 4 || !isDigit(s, 0) || !/^[0-9]{4}/.test(s)) this.fail('2006', s);
    this.rest = s.slice(4);
    return Number(s.slice(0, 4));
  }

  /** getnum: one or two digits (exactly two when fixed). */
  private num(elem: string, fixed: boolean): number {
    const s = this.rest;
    if (!isDigit(s, 0)) this.fail(elem, s);
    if (!isDigit(s, 1)) {
      if (fixed) this.fail(elem, s);
      this.rest = s.slice(1);
      return Number(s[0]);
    }
    this.rest = s.slice(2);
    return Number(s.slice(0, 2));
  }

  private literal(prefix: string): void {
    if (this.rest[0] !== prefix) this.fail(prefix, this.rest);
    this.rest = this.rest.slice(1);
  }

  /** Z07:00: `Z` or ±hh:mm; returns the offset east of UTC in seconds. */
  private zone(): number {
    const s = this.rest;
    if (s[0] === 'Z') {
      this.rest = s.slice(1);
      return 0;
    }
    if (s.length < 6 || s[3] !== ':' || !isDigit(s, 1) || !isDigit(s, 2) || !isDigit(s, 4) || !isDigit(s, 5)) this.fail('Z07:00', s);
    const hr = Number(s.slice(1, 3));
    const mm = Number(s.slice(4, 6));
    this.rest = s.slice(6);
    if (hr > 24) this.rangeError('time zone offset hour');
    if (mm > 60) this.rangeError('time zone offset minute');
    if (s[0] !== '+' && s[0] !== '-') this.fail('Z07:00', s);
    const off = (hr * 60 + mm) * 60;
    return s[0] === '-' ? -off : off;
  }

  private rangeError(what: string): never {
    this.fail('', this.rest, `: ${what} out of range`);
  }

  private fail(elem: string, valueElem: string, message = ''): never {
    if (message) throw new Error(`parsing time ${goTimeQuote(this.value)}${message}`);
    throw new Error(
      `parsing time ${goTimeQuote(this.value)} as ${goTimeQuote(RFC3339)}: cannot parse ${goTimeQuote(valueElem)} as ${goTimeQuote(elem)}`,
    );
  }
}

function isDigit(s: string, i: number): boolean {
  const c = s.charCodeAt(i);
  return c >= 48 && c <= 57;
}

function daysIn(month: number, year: number): number {
  if (month === 2) return (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)) ? 29 : 28;
  return [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
}

/** The time package's quote: non-ASCII and control bytes as \x escapes. */
function goTimeQuote(s: string): string {
  let out = '"';
  for (const b of new TextEncoder().encode(s)) {
    if (b >= 0x80 || b < 0x20) out += '\\x' + b.toString(16).padStart(2, '0');
    else {
      const c = String.fromCharCode(b);
      out += c === '"' || c === '\\' ? '\\' + c : c;
    }
  }
  return out + '"';
}

const GO_UNITS: Record<string, number> = { ns: 1, us: 1e3, 'µs': 1e3, 'μs': 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 };

/** time.ParseDuration, accepting the same texts (overflow beyond int64 nanoseconds fails). */
export function parseGoDuration(s: string): number | undefined {
  let i = 0;
  let neg = false;
  if (s[0] === '-' || s[0] === '+') {
    neg = s[0] === '-';
    i++;
  }
  if (s.slice(i) === '0') return 0;
  if (i >= s.length) return undefined;
  let total = 0;
  while (i < s.length) {
    const num = /^(\d*)(\.(\d*))?/.exec(s.slice(i)) as RegExpExecArray;
    if (num[0] === '' || num[0] === '.') return undefined;
    i += num[0].length;
    const unit = /^[^\d.]+/.exec(s.slice(i));
    if (!unit || !Object.prototype.hasOwnProperty.call(GO_UNITS, unit[0])) return undefined;
    i += unit[0].length;
    total += Number(`${num[1] || '0'}.${num[3] ?? ''}`) * GO_UNITS[unit[0]];
  }
  if (total > 9223372036854775807) return undefined;
  return neg ? -total : total;
}
