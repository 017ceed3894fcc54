import { expectedGot, formatGot, SHOWN_ISSUES, closest, quotedList } from '../errors.js';
import type { SourceContext, SourceItem, SourceLocation, TableEntry } from './types.js';
import { jobFieldNames } from '../fields.js';
import { complaintBody, manifestAt, problemAt, templateProblem, type Complaint } from './rows.js';

/**
 * How a CSV/TSV header maps onto job fields: `columns: { field: column }` first, then every
 * other column named like a field. A column that maps to nothing is an error, reported once at
 * the header rather than once a row.
 */
export interface ColumnPlan {
  /** By column index: the fields the column fills (usually one). */
  fieldsOf: string[][];
  columnOf: Map<string, number>;
}

/**
 * A header's problems: the first SHOWN_ISSUES made, the rest only counted. A header of 400,000
 * stray columns is one mistake (the wrong file, the wrong delimiter), not 400,000 messages to build.
 */
class HeaderProblems {
  readonly #items: SourceItem[] = [];
  #more = 0;

  add(make: () => SourceItem): void {
    if (this.#items.length < SHOWN_ISSUES) this.#items.push(make());
    else this.#more += 1;
  }

  /** The problems made, after one that says how many more there are (first, so it is shown). */
  all(at: (col: number) => SourceLocation): SourceItem[] {
    if (this.#more === 0) return this.#items;
    const got = `${(SHOWN_ISSUES + this.#more).toLocaleString('en-US')} problems with its columns`;
    const summary = problemAt(at(1), { ...expectedGot('a header naming fields of a job', got), hint: `the first ${SHOWN_ISSUES} are listed; is this the right file, with the right delimiter?` });
    return [summary, ...this.#items];
  }
}

function checkNames(header: readonly string[], at: (col: number) => SourceLocation, problems: HeaderProblems): void {
  const seen = new Map<string, number>();
  header.forEach((name, i) => {
    if (name === '') {
      problems.add(() => problemAt(at(i + 1), { ...expectedGot('a column name', 'an empty header cell'), hint: 'name the column or delete it' }));
      return;
    }
    const first = seen.get(name);
    if (first !== undefined) problems.add(() => problemAt(at(i + 1), { ...expectedGot('each column name once', `"${name}" again (also column ${first + 1})`), hint: 'rename one of them' }));
    else seen.set(name, i);
  });
}

function mapColumns(header: readonly string[], entry: TableEntry, display: string, context: SourceContext, plan: ColumnPlan, problems: HeaderProblems): void {
  for (const [field, column] of Object.entries(entry.columns)) {
    const index = header.indexOf(column);
    if (index !== -1) {
      plan.columnOf.set(field, index);
      plan.fieldsOf[index]?.push(field);
      continue;
    }
    const near = closest(column, header, 1);
    const hint = near.length > 0 ? `did you mean ${quotedList(near)}?` : `its columns: ${header.join(', ')}`;
    problems.add(() => problemAt(manifestAt(context, ['columns', field]), { field: `columns.${field}`, ...expectedGot(`a column of ${display}`, formatGot(column)), hint }));
  }
}

function unknownColumn(name: string, entry: TableEntry, fields: readonly string[]): Complaint {
  const near = closest(name, fields, 1)[0];
  const kind = entry.type === undefined ? 'a job' : entry.type;
  return {
    expected: `a column named like a field of ${kind} or mapped in columns:`,
    got: formatGot(name),
    hint: `map it (columns: { ${near ?? '<field>'}: ${name} }) or remove the column`,
  };
}

function readTwice(name: string, entry: TableEntry): Complaint {
  const from = entry.columns[name];
  return { expected: 'each column read once', got: `"${name}" (${name} is read from column "${from}")`, hint: 'remove the column, or map it to another field in columns:' };
}

/** The plan for `header`, or every problem with it (then no row is read). */
export function planColumns(header: readonly string[], entry: TableEntry, display: string, context: SourceContext, at: (col: number) => SourceLocation): ColumnPlan | SourceItem[] {
  const problems = new HeaderProblems();
  checkNames(header, at, problems);
  const plan: ColumnPlan = { fieldsOf: header.map(() => []), columnOf: new Map() };
  mapColumns(header, entry, display, context, plan, problems);
  const fields = jobFieldNames(entry.type);
  const mapped = new Set(Object.values(entry.columns));
  header.forEach((name, i) => {
    if (name === '' || mapped.has(name) || (plan.fieldsOf[i]?.length ?? 0) > 0) return;
    if (!fields.includes(name)) problems.add(() => problemAt(at(i + 1), complaintBody(undefined, unknownColumn(name, entry, fields))));
    else if (Object.hasOwn(entry.columns, name)) problems.add(() => problemAt(at(i + 1), complaintBody(undefined, readTwice(name, entry))));
    else {
      plan.columnOf.set(name, i);
      plan.fieldsOf[i]?.push(name);
    }
  });
  for (const problem of sourceLevelProblems(entry, context, plan, at)) problems.add(() => problem);
  const all = problems.all(at);
  return all.length > 0 ? all : plan;
}

/** No type anywhere, or an id template naming a field no column or entry gives. */
function sourceLevelProblems(entry: TableEntry, context: SourceContext, plan: ColumnPlan, at: (col: number) => SourceLocation): SourceItem[] {
  const problems: SourceItem[] = [];
  if (entry.type === undefined && !plan.columnOf.has('type')) {
    const hint = 'add a type column, or type: to the source entry';
    problems.push(problemAt(at(1), { field: 'type', ...expectedGot('a type for every row', 'no type column and no type on the entry'), hint }));
  }
  const template = templateProblem(entry, context, ['n', ...plan.columnOf.keys(), ...Object.keys(entry.fields)]);
  return template === undefined ? problems : [...problems, template];
}
