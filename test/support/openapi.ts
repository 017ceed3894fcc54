/**
 * Checks a request as it travelled (method, URL, headers, body bytes) against the service's
 * official OpenAPI document (test/fixtures/openapi): the operation exists, its parameters and
 * headers are valid, its content type is one the operation takes, and its body fits the schema,
 * JSON or multipart (openapi-multipart.ts). Every problem is returned in words, none thrown, so
 * a test can show them all at once.
 */
import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject } from 'ajv';
import { checkMultipart } from './openapi-multipart.js';
import { deref, escapePointer, type Located, type SchemaNode } from './openapi-schema.js';

export type { SchemaNode } from './openapi-schema.js';

/** A request as the server received it (the scripted server's RecordedRequest fits). */
export interface SentRequest {
  method: string;
  /** Path and query, as on the request line. */
  url: string;
  headers: Readonly<Record<string, string | string[] | undefined>>;
  body: Buffer;
}

export interface OpenApiCheck {
  /** `POST /api/v1/client/txt2img`, as the document names it; undefined when no operation matches. */
  operation: string | undefined;
  problems: string[];
}

export const OFFICIAL_DOCUMENT = new URL('../fixtures/openapi/deapi-openapi-v1.json', import.meta.url);

type FoundOperation = Located & { template: string; pathParams: string[] };
type Typed = { value: unknown } | { problem: string };

interface Parameter {
  name: string;
  in: 'query' | 'header' | 'path' | 'cookie';
  required?: boolean;
  explode?: boolean;
  schema: SchemaNode;
}

/** The document, and a validator that reads any schema in it by its JSON pointer. */
export class OpenApi {
  readonly root: SchemaNode;
  private readonly ajv = new Ajv({ strict: false, allErrors: true });

  constructor(document: SchemaNode) {
    this.root = closedObjects(structuredClone(document));
    this.ajv.addFormat('binary', true);
    this.ajv.addFormat('float', { type: 'number', validate: () => true });
    this.ajv.addFormat('double', { type: 'number', validate: () => true });
    this.ajv.addFormat('uri', (value: string) => URL.canParse(value));
    this.ajv.addFormat('uuid', /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);
    this.ajv.addFormat('date-time', (value: string) => !Number.isNaN(Date.parse(value)));
    this.ajv.addSchema(this.root, 'openapi');
  }

  static load(file: URL = OFFICIAL_DOCUMENT): OpenApi {
    return new OpenApi(JSON.parse(readFileSync(file, 'utf8')) as SchemaNode);
  }

  /** What is wrong with `value` against the schema at `pointer` (nothing: valid), each error prefixed by `where`. */
  validate(pointer: string, value: unknown, where: string): string[] {
    const validator = this.ajv.getSchema(`openapi#${pointer}`);
    if (validator === undefined) return [`${where}: no schema at ${pointer}`];
    if (validator(value)) return [];
    return (validator.errors ?? []).map((error) => `${where}${errorPath(error)}: ${errorText(error)}`);
  }

  async check(request: SentRequest): Promise<OpenApiCheck> {
    const url = new URL(request.url, 'http://127.0.0.1');
    const method = request.method.toLowerCase();
    const found = this.operationOf(method, url.pathname);
    if (found === undefined) {
      return { operation: undefined, problems: [`no operation ${request.method} ${url.pathname} in the document`] };
    }
    const operation = `${request.method.toUpperCase()} ${found.template}`;
    const problems = [
      ...this.checkParameters(found, url, request.headers),
      ...checkAuthorization(request.headers),
      ...(await this.checkBody(found, request)),
    ];
    return { operation, problems };
  }

  private operationOf(method: string, pathname: string): FoundOperation | undefined {
    const paths = this.root['paths'] as Record<string, Record<string, SchemaNode>>;
    for (const [template, item] of Object.entries(paths)) {
      const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '([^/]+)')}$`);
      const match = pattern.exec(pathname);
      const node = item[method];
      if (match === null || node === undefined) continue;
      const pathParams = match.slice(1).map((value) => decodeURIComponent(value));
      return { node, pointer: `/paths/${escapePointer(template)}/${method}`, template, pathParams };
    }
    return undefined;
  }

  private parameters({ node, pointer }: Located): Array<Located & { parameter: Parameter }> {
    const listed = (node['parameters'] ?? []) as SchemaNode[];
    return listed.map((_, index) => {
      const found = deref(this.root, { node: listed[index] as SchemaNode, pointer: `${pointer}/parameters/${index}` });
      return { ...found, parameter: found.node as unknown as Parameter };
    });
  }

  private checkParameters(found: FoundOperation, url: URL, headers: SentRequest['headers']): string[] {
    const problems: string[] = [];
    const parameters = this.parameters(found);
    let pathIndex = 0;
    for (const { parameter, pointer } of parameters) {
      const where = `${parameter.in} parameter ${parameter.name}`;
      const sent =
        parameter.in === 'query' ? (url.searchParams.get(parameter.name) ?? undefined)
        : parameter.in === 'header' ? headerValue(headers, parameter.name)
        : parameter.in === 'path' ? found.pathParams[pathIndex++]
        : undefined;
      if (sent === undefined) {
        if (parameter.required === true) problems.push(`${where} is required and missing`);
        continue;
      }
      const schema = deref(this.root, { node: parameter.schema, pointer: `${pointer}/schema` });
      const value = schema.node['type'] === 'array' && parameter.explode === false ? sent.split(',') : sent;
      problems.push(...this.checkText(schema, value, where));
    }
    const queries = parameters.filter(({ parameter }) => parameter.in === 'query');
    const declared = new Set(queries.map(({ parameter }) => parameter.name));
    for (const name of new Set(url.searchParams.keys())) {
      if (!declared.has(name)) problems.push(`query parameter ${name} is not in the document`);
    }
    return problems;
  }

  /** A value sent as text (a parameter, a multipart field) checked as the typed value it stands for. */
  checkText(schema: Located, sent: string | string[], where: string): string[] {
    const itemsOf = (items: SchemaNode) => deref(this.root, { node: items, pointer: `${schema.pointer}/items` }).node;
    const typed = typedText(schema.node, sent, itemsOf);
    if ('problem' in typed) return [`${where}: ${typed.problem}`];
    return this.validate(schema.pointer, typed.value, where);
  }

  private async checkBody(found: Located, request: SentRequest): Promise<string[]> {
    const hasBody = request.body.length > 0;
    const requestBody = found.node['requestBody'] as SchemaNode | undefined;
    if (requestBody === undefined) return hasBody ? ['a body was sent to an operation that takes none'] : [];
    const body = deref(this.root, { node: requestBody, pointer: `${found.pointer}/requestBody` });
    if (!hasBody) return body.node['required'] === true ? ['the request body is required and missing'] : [];
    const content = body.node['content'] as Record<string, SchemaNode>;
    const sentType = headerValue(request.headers, 'content-type') ?? '';
    const mediaType = sentType.split(';')[0]?.trim().toLowerCase() ?? '';
    const listed = Object.keys(content);
    const refused = `content type ${mediaType || '(none)'} is not one it takes (${listed.join(', ')})`;
    const problems = listed.includes(mediaType) ? [] : [refused];
    // A body in an unlisted type is still checked against the schema of the type it should have had.
    const schemaType = listed.includes(mediaType) ? mediaType : (listed[0] ?? '');
    const schema = deref(this.root, {
      node: (content[schemaType] as SchemaNode)['schema'] as SchemaNode,
      pointer: `${body.pointer}/content/${escapePointer(schemaType)}/schema`,
    });
    if (mediaType === 'multipart/form-data') {
      return [...problems, ...(await checkMultipart(this, schema, sentType, request.body))];
    }
    if (mediaType !== 'application/json') return problems;
    let json: unknown;
    try {
      json = JSON.parse(request.body.toString('utf8'));
    } catch {
      return [...problems, 'the body is not JSON'];
    }
    return [...problems, ...this.validate(schema.pointer, json, 'body')];
  }
}

/**
 * The document's objects list their properties but (like most OpenAPI documents) do not close
 * themselves: a misspelt field would pass. A conformance test wants it refused, so every object
 * schema that lists properties takes no others. (The document has no allOf, which this would break.)
 */
function closedObjects(node: SchemaNode): SchemaNode {
  for (const value of Object.values(node)) {
    if (value !== null && typeof value === 'object') closedObjects(value as SchemaNode);
  }
  const properties = node['properties'];
  const isSchema = properties !== null && typeof properties === 'object' && !('in' in node);
  if (isSchema && node['additionalProperties'] === undefined) node['additionalProperties'] = false;
  return node;
}

/** Multipart and query values are text: the integer, number or boolean they stand for, or why none. */
function typedText(schema: SchemaNode, sent: string | string[], itemsOf: (items: SchemaNode) => SchemaNode): Typed {
  if (Array.isArray(sent)) {
    const items = schema['items'] === undefined ? {} : itemsOf(schema['items'] as SchemaNode);
    const typed = sent.map((each) => typedText(items, each, itemsOf));
    const wrong = typed.find((each) => 'problem' in each);
    return wrong ?? { value: typed.map((each) => (each as { value: unknown }).value) };
  }
  const quoted = JSON.stringify(sent);
  switch (schema['type']) {
    case 'integer':
      return /^-?\d+$/.test(sent) ? { value: Number(sent) } : { problem: `${quoted} is not an integer` };
    case 'number': {
      const number = sent.trim() === '' ? Number.NaN : Number(sent);
      return Number.isFinite(number) ? { value: number } : { problem: `${quoted} is not a number` };
    }
    case 'boolean':
      // The service validates booleans as Laravel does: 1/0 as text; "true" and "false" are refused.
      if (sent === '1' || sent === '0') return { value: sent === '1' };
      return { problem: `${quoted} is not a boolean sent as 1 or 0` };
    default:
      return { value: sent };
  }
}

function headerValue(headers: SentRequest['headers'], name: string): string | undefined {
  const value = headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** The document's one security scheme: an HTTP bearer token on every operation. */
function checkAuthorization(headers: SentRequest['headers']): string[] {
  return /^Bearer \S+$/.test(headerValue(headers, 'authorization') ?? '') ? [] : ['no bearer token in Authorization'];
}

function errorPath(error: ErrorObject): string {
  return error.instancePath === '' ? '' : ` ${error.instancePath.slice(1).replaceAll('/', '.')}`;
}

function errorText(error: ErrorObject): string {
  const { params } = error;
  if (error.keyword === 'additionalProperties') {
    return `${String(params['additionalProperty'])} is not a property of the schema`;
  }
  if (error.keyword === 'enum') {
    return `must be one of ${(params['allowedValues'] as unknown[]).map((value) => JSON.stringify(value)).join(', ')}`;
  }
  return error.message ?? error.keyword;
}
