/**
 * A multipart body against an operation's schema: every part's name is a property of the schema
 * (or of one branch of its oneOf), the required ones are there, files (`format: binary`) travel as
 * file parts with a content type and everything else as text whose value fits the property.
 */
import type { OpenApi } from './openapi.js';
import { deref, escapePointer, type Located, type SchemaNode } from './openapi-schema.js';

interface Part {
  name: string;
  /** Set for a file part (one with a filename). */
  file?: { contentType: string; bytes: number };
  text?: string;
}

export async function checkMultipart(api: OpenApi, schema: Located, contentType: string, body: Buffer) {
  let parts: Part[];
  try {
    parts = await partsOf(contentType, body);
  } catch (error) {
    return [`the multipart body cannot be read: ${(error as Error).message}`];
  }
  return checkParts(api, schema, parts);
}

async function partsOf(contentType: string, body: Buffer): Promise<Part[]> {
  // The platform's own multipart parser, so the body is read as a server would read it.
  const form = await new Response(body, { headers: { 'content-type': contentType } }).formData();
  return [...form.entries()].map(([name, value]) =>
    typeof value === 'string' ? { name, text: value } : { name, file: { contentType: value.type, bytes: value.size } },
  );
}

function checkParts(api: OpenApi, schema: Located, parts: readonly Part[]): string[] {
  const branches = (schema.node['oneOf'] ?? schema.node['anyOf']) as SchemaNode[] | undefined;
  if (branches === undefined) return checkObject(api, schema, parts);
  const keyword = schema.node['oneOf'] === undefined ? 'anyOf' : 'oneOf';
  const results = branches.map((branch, index) =>
    checkParts(api, deref(api.root, { node: branch, pointer: `${schema.pointer}/${keyword}/${index}` }), parts),
  );
  const passing = results.filter((problems) => problems.length === 0).length;
  if (passing === 1 || (passing > 1 && keyword === 'anyOf')) return [];
  if (passing > 1) return [`the fields match ${passing} branches of the oneOf, not exactly one`];
  const nearest = results.reduce((best, problems) => (problems.length < best.length ? problems : best));
  const index = results.indexOf(nearest);
  return nearest.map((problem) => `no branch of the ${keyword} fits; nearest (${index}): ${problem}`);
}

function checkObject(api: OpenApi, object: Located, parts: readonly Part[]): string[] {
  const properties = (object.node['properties'] ?? {}) as Record<string, SchemaNode>;
  const problems: string[] = [];
  const counts = new Map<string, number>();
  for (const part of parts) {
    const found = propertyOf(api, object, properties, part.name);
    if (found === undefined) {
      problems.push(`field ${part.name} is not a property of the schema`);
      continue;
    }
    counts.set(found.property, (counts.get(found.property) ?? 0) + 1);
    problems.push(...checkPart(api, found.schema, part));
  }
  for (const [property, count] of counts) {
    const type = deref(api.root, propertyAt(object, properties, property)).node['type'];
    const repeatable = property.endsWith('[]') || type === 'array';
    if (count > 1 && !repeatable) problems.push(`field ${property} is sent ${count} times`);
  }
  for (const name of (object.node['required'] ?? []) as string[]) {
    if (!counts.has(name)) problems.push(`required field ${name} is missing`);
  }
  return problems;
}

function propertyAt(object: Located, properties: Record<string, SchemaNode>, name: string): Located {
  return { node: properties[name] as SchemaNode, pointer: `${object.pointer}/properties/${escapePointer(name)}` };
}

/**
 * The property a part's name sets: the name itself (`images[]` is a property so named), else the
 * name before its brackets, walked into (`loras[0][weight]`: an item's `weight`).
 */
function propertyOf(api: OpenApi, object: Located, properties: Record<string, SchemaNode>, name: string) {
  if (properties[name] !== undefined) {
    return { property: name, schema: deref(api.root, propertyAt(object, properties, name)) };
  }
  const match = /^([^[\]]+)((?:\[[^[\]]*\])+)$/.exec(name);
  if (match === null || properties[match[1] as string] === undefined) return undefined;
  const property = match[1] as string;
  let schema = deref(api.root, propertyAt(object, properties, property));
  for (const [, key] of (match[2] as string).matchAll(/\[([^[\]]*)\]/g)) {
    const inner = schema.node['properties'] as Record<string, SchemaNode> | undefined;
    const [node, pointer] =
      schema.node['type'] === 'array'
        ? [schema.node['items'] as SchemaNode | undefined, `${schema.pointer}/items`]
        : [inner?.[key as string], `${schema.pointer}/properties/${escapePointer(key as string)}`];
    if (node === undefined) return undefined;
    schema = deref(api.root, { node, pointer });
  }
  return { property, schema };
}

function isFile(schema: SchemaNode, root: SchemaNode): boolean {
  if (schema['format'] === 'binary') return true;
  const items = schema['items'] as SchemaNode | undefined;
  if (schema['type'] !== 'array' || items === undefined) return false;
  return isFile(deref(root, { node: items, pointer: '' }).node, root);
}

function checkPart(api: OpenApi, schema: Located, part: Part): string[] {
  const where = `field ${part.name}`;
  if (isFile(schema.node, api.root)) {
    if (part.file === undefined) return [`${where} is a file (format: binary) but was sent as text`];
    return part.file.contentType === '' ? [`${where} is a file part without a content type`] : [];
  }
  if (part.text === undefined) return [`${where} is text but was sent as a file`];
  return api.checkText(schema, part.text, where);
}
