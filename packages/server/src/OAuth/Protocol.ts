/**
 * OAuth 2.0 (RFC 6749) as laari speaks it: the client credentials grant only, for a merchant's own
 * servers. Pure: the request's parameters and client authentication in, a decision or an RFC 6749
 * section 5.2 error out. I/O is in `Http.ts`; the clients and tokens are core's `OAuthClients`.
 */
import { Auth } from "@laari/core"

export type ErrorCode =
  | "invalid_request"
  | "invalid_client"
  | "invalid_grant"
  | "unauthorized_client"
  | "unsupported_grant_type"
  | "invalid_scope"
  | "unsupported_token_type"

/** An error answer of RFC 6749 section 5.2: `400`, or `401` with `WWW-Authenticate` for the client. */
export class OAuthError {
  readonly _tag = "OAuthError"
  constructor(
    readonly error: ErrorCode,
    readonly description: string
  ) {}
  get status(): number {
    return this.error === "invalid_client" ? 401 : 400
  }
}

/** The parameters of a form body; a parameter sent twice is a malformed request (RFC 6749 3.1, 3.2). */
export const parseForm = (body: string): Map<string, string> | OAuthError => {
  const params = new Map<string, string>()
  for (const [name, value] of new URLSearchParams(body)) {
    if (params.has(name))
      return new OAuthError("invalid_request", `The parameter ${name} was sent more than once`)
    params.set(name, value)
  }
  return params
}

export interface ClientCredentials {
  readonly clientId: string
  readonly clientSecret: string
  /** How the client authenticated: `basic` (the Authorization header) or `post` (the body). */
  readonly method: "basic" | "post"
}

/** `application/x-www-form-urlencoded` decoding of a Basic credential's parts (RFC 6749 2.3.1). */
const formDecode = (s: string): string | undefined => {
  try {
    return decodeURIComponent(s.replace(/\+/g, " "))
  } catch {
    return undefined
  }
}

/**
 * The client's credentials, from HTTP Basic or from the body, never both (RFC 6749 2.3). `undefined`: the
 * client did not authenticate.
 */
export const clientCredentials = (
  authorization: string | undefined,
  params: Map<string, string>
): ClientCredentials | OAuthError | undefined => {
  const inBody = params.has("client_id") || params.has("client_secret")
  if (authorization !== undefined && authorization.trim() !== "") {
    if (inBody)
      return new OAuthError("invalid_request", "Authenticate the client one way: HTTP Basic or the body")
    const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(authorization)
    if (m === null) return new OAuthError("invalid_client", "The client authenticates with HTTP Basic")
    const decoded = Buffer.from(m[1]!, "base64").toString("utf8")
    const colon = decoded.indexOf(":")
    const id = colon < 0 ? undefined : formDecode(decoded.slice(0, colon))
    const secret = colon < 0 ? undefined : formDecode(decoded.slice(colon + 1))
    if (id === undefined || secret === undefined || id === "")
      return new OAuthError("invalid_client", "The Basic credentials are malformed")
    return { clientId: id, clientSecret: secret, method: "basic" }
  }
  if (!inBody) return undefined
  const id = params.get("client_id")
  const secret = params.get("client_secret")
  if (id === undefined || id === "" || secret === undefined)
    return new OAuthError("invalid_client", "Send both client_id and client_secret")
  return { clientId: id, clientSecret: secret, method: "post" }
}

/**
 * What a grant type comes to. Only `client_credentials` is served. The other grants RFC 6749 defines
 * are answered as it says for them: laari issues no codes or refresh tokens, so one presented is not
 * valid (`invalid_grant`); no client is authorized for the password grant (`unauthorized_client`);
 * anything else is not a grant laari knows (`unsupported_grant_type`).
 */
export const grant = (grantType: string | undefined): "client_credentials" | OAuthError => {
  switch (grantType) {
    case "client_credentials":
      return "client_credentials"
    case undefined:
    case "":
      return new OAuthError("invalid_request", "grant_type is required")
    case "authorization_code":
      return new OAuthError("invalid_grant", "laari issues no authorization codes: the code is not valid")
    case "refresh_token":
      return new OAuthError("invalid_grant", "laari issues no refresh tokens: ask for a new access token")
    case "password":
      return new OAuthError("unauthorized_client", "Clients may use the client_credentials grant only")
    default:
      return new OAuthError("unsupported_grant_type", `The grant type ${grantType} is not supported`)
  }
}

/**
 * The scopes a token gets: those asked for (space-delimited, RFC 6749 3.3), each among the client's, or
 * all of the client's when none are asked for.
 */
export const grantedScopes = (
  requested: string | undefined,
  allowed: ReadonlyArray<Auth.Scope>
): ReadonlyArray<Auth.Scope> | OAuthError => {
  if (requested === undefined) return allowed
  const asked = requested.split(" ").filter((s) => s !== "")
  if (asked.length === 0 || requested !== asked.join(" "))
    return new OAuthError("invalid_scope", "scope is a list of scopes separated by single spaces")
  const granted: Array<Auth.Scope> = []
  for (const scope of asked) {
    if (!(Auth.allScopes as ReadonlyArray<string>).includes(scope))
      return new OAuthError("invalid_scope", `Unknown scope: ${scope}`)
    if (!allowed.includes(scope as Auth.Scope))
      return new OAuthError("invalid_scope", `The client may not have the scope ${scope}`)
    if (!granted.includes(scope as Auth.Scope)) granted.push(scope as Auth.Scope)
  }
  return granted
}
