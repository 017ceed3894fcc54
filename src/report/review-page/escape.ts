/** What a page's text and attributes escape: every character that could start or end markup. */
const HTML_SPECIAL = /[&<>"']/g;
const HTML_ENTITY: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text for an HTML element or a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(HTML_SPECIAL, (c) => HTML_ENTITY[c] ?? c);
}

/**
 * `<`, `>` and `&` can only occur inside JSON strings, where `\u003c` means the same: escaped,
 * no job text can close the script element (`</script>`) or open a comment (`<!--`) in it.
 * U+2028 and U+2029 end a line in old JavaScript parsers; escaped, they are plain characters.
 */
const SCRIPT_UNSAFE = /[<>&\u2028\u2029]/g;

/** JSON for a `<script type="application/json">` element: `JSON.parse` of its text gives `value` back. */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(SCRIPT_UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
