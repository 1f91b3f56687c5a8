/**
 * The clients' protocol types, generated from the protocol module's JSON Schemas (spec/schema/): TypeScript
 * declarations for `clients/ts` and dataclasses for `clients/python`. The schemas stay the single source of
 * truth; these files are never edited by hand (`deno task build:clients --check` fails when they drift).
 *
 * @module
 */

/** The subset of JSON Schema the protocol's schemas use. */
export interface JsonSchema {
  readonly type?: string | readonly string[];
  readonly const?: unknown;
  readonly enum?: readonly unknown[];
  readonly anyOf?: readonly JsonSchema[];
  readonly oneOf?: readonly JsonSchema[];
  readonly items?: JsonSchema;
  readonly properties?: Readonly<Record<string, JsonSchema>>;
  readonly required?: readonly string[];
  readonly additionalProperties?: boolean | JsonSchema;
  readonly description?: string;
  readonly title?: string;
}

/** A TypeScript type for `schema` (`indent`: of the lines inside an object type). */
export function tsType(schema: JsonSchema, indent = "  "): string {
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.enum !== undefined) return schema.enum.map((v) => JSON.stringify(v)).join(" | ");
  const union = schema.anyOf ?? schema.oneOf;
  if (union !== undefined) return union.map((s) => wrap(tsType(s, indent))).join(" | ");
  if (Array.isArray(schema.type)) {
    return (schema.type as string[]).map((type) => tsType({ ...schema, type }, indent)).join(" | ");
  }
  switch (schema.type) {
    case "string":
      return "string";
    case "number":
    case "integer":
      return "number";
    case "boolean":
      return "boolean";
    case "null":
      return "null";
    case "array":
      return `${wrap(schema.items === undefined ? "unknown" : tsType(schema.items, indent))}[]`;
    case "object":
      return tsObject(schema, indent);
    default:
      return "unknown";
  }
}

function wrap(type: string): string {
  return type.includes(" | ") && !type.startsWith("{") ? `(${type})` : type;
}

function tsObject(schema: JsonSchema, indent: string): string {
  const properties = Object.entries(schema.properties ?? {});
  const extra = schema.additionalProperties;
  if (properties.length === 0) {
    return typeof extra === "object" ? `Record<string, ${tsType(extra, indent)}>` : "Record<string, unknown>";
  }
  const required = new Set(schema.required ?? []);
  const lines = properties.map(([name, property]) => {
    const doc = property.description === undefined
      ? ""
      : `${indent}/** ${docText(property.description)} */\n`;
    const key = /^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name);
    return `${doc}${indent}${key}${required.has(name) ? "" : "?"}: ${tsType(property, `${indent}  `)};`;
  });
  return `{\n${lines.join("\n")}\n${indent.slice(2)}}`;
}

function docText(text: string): string {
  return text.replaceAll("*/", "*\\/").replaceAll("\n", " ");
}

/** A Python type annotation for `schema`. */
export function pyType(schema: JsonSchema): string {
  if (schema.const !== undefined) return `Literal[${JSON.stringify(schema.const)}]`;
  if (schema.enum !== undefined) return `Literal[${schema.enum.map((v) => JSON.stringify(v)).join(", ")}]`;
  const union = schema.anyOf ?? schema.oneOf;
  if (union !== undefined) return union.map(pyType).join(" | ");
  if (Array.isArray(schema.type)) {
    return (schema.type as string[]).map((type) => pyType({ ...schema, type })).join(" | ");
  }
  switch (schema.type) {
    case "string":
      return "str";
    case "number":
      return "float";
    case "integer":
      return "int";
    case "boolean":
      return "bool";
    case "null":
      return "None";
    case "array":
      return `list[${schema.items === undefined ? "Any" : pyType(schema.items)}]`;
    case "object":
      return "dict[str, Any]";
    default:
      return "Any";
  }
}

/**
 * A frozen Python dataclass `name` for an object schema: required fields first, then optional ones
 * defaulting to None, each named as in JSON; `from_json` builds one, ignoring fields it does not know.
 */
export function pyDataclass(
  name: string,
  schema: JsonSchema,
  nested: Readonly<Record<string, string>> = {},
): string {
  const required = new Set(schema.required ?? []);
  const entries = Object.entries(schema.properties ?? {});
  const fields = [
    ...entries.filter(([field]) => required.has(field)),
    ...entries.filter(([field]) => !required.has(field)),
  ];
  const lines = [
    `@dataclass(frozen=True)`,
    `class ${name}:`,
    `    """${(schema.title ?? name).replaceAll('"""', "'''")}."""`,
    "",
  ];
  for (const [field, property] of fields) {
    const type = nested[field] === undefined ? pyType(property) : `${nested[field]} | None`;
    if (property.description !== undefined) lines.push(`    # ${property.description.replaceAll("\n", " ")}`);
    lines.push(`    ${field}: ${required.has(field) ? type : `${type} | None = None`}`);
  }
  const build = fields.map(([field]) => {
    const read = required.has(field)
      ? `data[${JSON.stringify(field)}]`
      : `data.get(${JSON.stringify(field)})`;
    return nested[field] === undefined
      ? `            ${field}=${read},`
      : `            ${field}=None if data.get(${JSON.stringify(field)}) is None else ${
        nested[field]
      }.from_json(${read}),`;
  });
  lines.push(
    "",
    "    @classmethod",
    `    def from_json(cls, data: dict[str, Any]) -> "${name}":`,
    `        """A ${name} from its JSON object (unknown fields are ignored: newer servers may add some)."""`,
    "        return cls(",
    ...build,
    "        )",
  );
  return lines.join("\n");
}
