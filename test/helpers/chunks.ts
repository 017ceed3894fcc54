/** The whole text of a document written as chunks (report/documents.ts, report/csv.ts). */
export async function textOf(chunks: AsyncIterable<string>): Promise<string> {
  let text = '';
  for await (const chunk of chunks) text += chunk;
  return text;
}
