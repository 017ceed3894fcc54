/**
 * A JSON document with one long list, written as it is read: the head's fields first, then the
 * list one item a line. A million jobs then cost a window of rows in memory, not a string of
 * hundreds of MB. The output is one valid JSON document, indented like JSON.stringify(…, null, 2)
 * at its top level.
 */
export async function* jsonDocumentChunks(head: object, listKey: string, items: AsyncIterable<object>): AsyncGenerator<string> {
  const opening = JSON.stringify(head, null, 2);
  const fields = opening === '{}' ? '{\n' : `${opening.slice(0, -2)},\n`;
  yield `${fields}  ${JSON.stringify(listKey)}: [`;
  let first = true;
  let lines: string[] = [];
  for await (const item of items) {
    lines.push(`${first ? '\n' : ',\n'}    ${JSON.stringify(item)}`);
    first = false;
    // Chunks of a few hundred items: few enough writes, small enough strings.
    if (lines.length >= 256) {
      yield lines.join('');
      lines = [];
    }
  }
  if (lines.length > 0) yield lines.join('');
  yield first ? ']\n}\n' : '\n  ]\n}\n';
}
