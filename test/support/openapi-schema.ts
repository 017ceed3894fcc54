/** Walking the OpenAPI document: a node with the JSON pointer it sits at, and `$ref`s followed. */

export type SchemaNode = Record<string, unknown>;

export interface Located {
  node: SchemaNode;
  /** Where the node sits in the document, so the validator reads it there and resolves its refs. */
  pointer: string;
}

export function escapePointer(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}

/** The node a `$ref` (local to the document) points to, followed until a node is not a ref. */
export function deref(root: SchemaNode, located: Located): Located {
  let current = located;
  for (let hops = 0; typeof current.node['$ref'] === 'string'; hops++) {
    const ref = current.node['$ref'] as string;
    if (!ref.startsWith('#/') || hops > 32) throw new Error(`cannot follow $ref ${ref}`);
    const pointer = ref.slice(1);
    const node = pointer
      .slice(1)
      .split('/')
      .map((key) => key.replaceAll('~1', '/').replaceAll('~0', '~'))
      .reduce<unknown>((at, key) => (at as SchemaNode | undefined)?.[key], root);
    if (node === undefined) throw new Error(`$ref ${ref} points to nothing`);
    current = { node: node as SchemaNode, pointer };
  }
  return current;
}
