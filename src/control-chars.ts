/**
 * Text someone else wrote (the service's error messages, reasons, names) printed as it came could
 * drive the terminal: ESC sequences clear the screen or set the window title, a CR or LF forges
 * a line such as "all 500 jobs done", bidi overrides make text read backwards. Such characters
 * are shown as visible escapes instead, so a person still sees that something odd was sent.
 */

// C0 (CR, LF and ESC included), DEL, C1, the invisible marks and separators, and the bidi controls.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]/g;

function visible(char: string): string {
  const code = char.charCodeAt(0);
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** `text` with every control character replaced by its escape (`\x1b`, `\r`→`\x0d`, `\u202e`). */
export function escapeControlChars(text: string): string {
  return text.replace(CONTROL, visible);
}

/**
 * The JSON text of `value` with every such character inside its strings written as a `\uXXXX`
 * escape: parsed, it is the very same data; printed or `tail`ed, it cannot drive a terminal.
 * (JSON.stringify escapes C0 itself, but leaves DEL, C1, bidi controls and U+2028 as they are.)
 */
export function terminalSafeJson(value: unknown): string {
  return JSON.stringify(value).replace(CONTROL, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
