/**
 * GraphQL output types made from the REST API's read schemas (`MandateRead`, `SubscriptionRead`, ...),
 * so both surfaces show the same fields, names and formats, and a field added to a read shape appears
 * in both. Integers are `SafeInt` (GraphQL's `Int` stops at 2^31, laari amounts need not), free-form
 * objects `JSON`.
 */
import { type Schema, SchemaAST } from "effect"
import * as G from "graphql"
import { Option } from "effect"

const safe = (value: unknown): number => {
  if (typeof value !== "number" || !Number.isSafeInteger(value))
    throw new TypeError("SafeInt: not a safe integer")
  return value
}

export const SafeInt = new G.GraphQLScalarType({
  name: "SafeInt",
  description: "An integer from -(2^53 - 1) to 2^53 - 1: amounts in laari, counts, Unix seconds",
  serialize: safe,
  parseValue: safe,
  parseLiteral: (ast) => (ast.kind === G.Kind.INT ? safe(Number(ast.value)) : safe(undefined))
})

export const Json = new G.GraphQLScalarType({
  name: "JSON",
  description: "Any JSON value, as the REST API shows it",
  serialize: (value) => value
})

/** Whether a refinement chain says "integer" (Schema.Int and what is built on it). */
const isInteger = (ast: SchemaAST.AST): boolean => {
  for (let at: SchemaAST.AST = ast; at._tag === "Refinement"; at = at.from) {
    const json = SchemaAST.getJSONSchemaAnnotation(at)
    if (Option.isSome(json) && (json.value as { type?: string }).type === "integer") return true
    if (Option.getOrUndefined(SchemaAST.getIdentifierAnnotation(at))?.includes("Int")) return true
  }
  return false
}

const isNull = (ast: SchemaAST.AST) => ast._tag === "Literal" && ast.literal === null

/**
 * A GraphQL enum of a schema of string literals (a status, a type), so GraphQL itself refuses any other
 * value, names the allowed ones and introspection lists them.
 */
export const enumOf = (name: string, schema: { readonly ast: SchemaAST.AST }): G.GraphQLEnumType => {
  const ast = schema.ast
  const members = ast._tag === "Union" ? ast.types : [ast]
  const values: Record<string, G.GraphQLEnumValueConfig> = {}
  for (const m of members) {
    if (m._tag !== "Literal" || typeof m.literal !== "string")
      throw new Error(`${name}: a GraphQL enum is made from string literals`)
    values[m.literal] = { value: m.literal }
  }
  return new G.GraphQLEnumType({ name, values })
}

/** A maker of object types, each made once by name (schemas share `Outlet`, `Charge`, ...). */
export const make = () => {
  const objects = new Map<string, G.GraphQLObjectType>()

  const nullable = (ast: SchemaAST.AST, name: string): G.GraphQLOutputType => {
    switch (ast._tag) {
      case "StringKeyword":
      case "TemplateLiteral":
        return G.GraphQLString
      case "BooleanKeyword":
        return G.GraphQLBoolean
      case "NumberKeyword":
        return G.GraphQLFloat
      case "Literal":
        return typeof ast.literal === "boolean"
          ? G.GraphQLBoolean
          : typeof ast.literal === "number"
            ? G.GraphQLFloat
            : G.GraphQLString
      case "Enums":
        return G.GraphQLString
      case "Refinement":
        return isInteger(ast) ? SafeInt : nullable(ast.from, name)
      case "Transformation":
        // The encoded side: what the REST API sends.
        return nullable(ast.from, name)
      case "Suspend":
        return nullable(ast.f(), name)
      case "TupleType":
        return ast.elements.length === 0 && ast.rest.length === 1
          ? new G.GraphQLList(output(ast.rest[0]!.type, name))
          : Json
      case "Union": {
        const members = ast.types.filter((t) => !isNull(t))
        if (members.length === 1) return nullable(members[0]!, name)
        // A union of literals of one kind is that kind; anything else is shown as JSON.
        if (members.every((m) => m._tag === "Literal" && typeof m.literal === "string"))
          return G.GraphQLString
        return Json
      }
      case "TypeLiteral":
        return ast.indexSignatures.length > 0 || ast.propertySignatures.length === 0
          ? Json
          : object(ast, name)
      default:
        return Json
    }
  }

  /** `ast` as an output type: non-null unless it admits `null`. */
  const output = (ast: SchemaAST.AST, name: string): G.GraphQLOutputType => {
    const type = nullable(ast, name)
    const admitsNull = ast._tag === "Union" && ast.types.some(isNull)
    return admitsNull ? type : (new G.GraphQLNonNull(type as G.GraphQLNullableType) as G.GraphQLOutputType)
  }

  const object = (ast: SchemaAST.TypeLiteral, fallback: string): G.GraphQLObjectType => {
    const name = Option.getOrElse(SchemaAST.getIdentifierAnnotation(ast), () => fallback)
    const known = objects.get(name)
    if (known !== undefined) return known
    const made = new G.GraphQLObjectType({
      name,
      description: Option.getOrUndefined(SchemaAST.getDescriptionAnnotation(ast)),
      fields: () =>
        Object.fromEntries(
          ast.propertySignatures.map((p) => {
            const field = String(p.name)
            const type = output(p.type, `${name}${field[0]!.toUpperCase()}${field.slice(1)}`)
            return [
              field,
              {
                type: p.isOptional ? G.getNullableType(type) : type,
                description: Option.getOrUndefined(SchemaAST.getDescriptionAnnotation(p.type))
              }
            ]
          })
        )
    })
    objects.set(name, made)
    return made
  }

  /**
   * The object type of a read schema, named by its identifier, with `extra` fields (nested lists and
   * their resolvers) added to the generated ones.
   */
  const fromSchema = (
    schema: Schema.Schema.AnyNoContext,
    // biome-ignore lint/suspicious/noExplicitAny: resolvers of any source and context
    extra: G.ThunkObjMap<G.GraphQLFieldConfig<any, any, any>> = {}
  ): G.GraphQLObjectType => {
    let ast = schema.ast
    while (ast._tag === "Refinement" || ast._tag === "Transformation")
      ast = ast._tag === "Refinement" ? ast.from : ast.to
    if (ast._tag !== "TypeLiteral") throw new Error("GraphQL types are made from structs")
    const base = object(
      ast,
      Option.getOrElse(SchemaAST.getIdentifierAnnotation(schema.ast), () => "Object")
    )
    if (Object.keys(typeof extra === "function" ? extra() : extra).length === 0) return base
    const config = base.toConfig()
    const withExtra = new G.GraphQLObjectType({
      ...config,
      fields: () => ({ ...config.fields, ...(typeof extra === "function" ? extra() : extra) })
    })
    objects.set(config.name, withExtra)
    return withExtra
  }

  return { fromSchema }
}
