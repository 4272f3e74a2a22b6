import type { paths } from './schema.js'
import type { Operations } from './operations.js'

// The operations of the API as types, from the generated document types (schema.ts) and table
// (operations.ts): what a call answers, by status.

export type Method = 'get' | 'put' | 'post' | 'delete' | 'options' | 'head' | 'patch' | 'trace'

/** Every operation of the API, as `METHOD /path`: `'GET /users/{userid}'`. */
export type Operation = keyof Operations

/** The path of an operation, and its method in lower case (openapi-fetch's and schema.ts's keys). */
export type PathOf<O extends Operation> = O extends `${Uppercase<Method>} ${infer P extends keyof paths}` ? P : never
export type MethodOf<O extends Operation> = O extends `${infer M extends Uppercase<Method>} ${string}` ? Lowercase<M> : never

/** The documented responses of an operation, by status. */
export type Responses<O extends Operation> = paths[PathOf<O>][MethodOf<O> & keyof paths[PathOf<O>]] extends { responses: infer R } ? R : never

/** The documented statuses of some responses; the success (2xx) ones, and the others (those of HTTP ApiErrors). */
export type Status<R> = { [S in keyof R]-?: S extends number ? S : never }[keyof R]
export type SuccessStatus<R> = { [S in keyof R]-?: S extends number ? `${S}` extends `2${string}` ? S : never : never }[keyof R]
export type ErrorStatus<R> = { [S in keyof R]-?: S extends number ? `${S}` extends `2${string}` ? never : S : never }[keyof R]

/** The body of a response: one of its media types' (JSON parsed, text as text); undefined when it has none. */
export type BodyOf<R> = R extends { content: infer C } ? C[keyof C] : undefined

/** The JSON body of a response (undefined when it has none). */
export type JsonOf<R> = R extends { content: { 'application/json': infer J } } ? J : undefined

/** The headers a response declares, without openapi-typescript's index signature. */
export type HeadersOf<R> = R extends { headers: infer H } ? { [K in keyof H as string extends K ? never : K]: H[K] } : object

declare const answeredBy: unique symbol

/**
 * A response, whose type knows the operation that answered it and the statuses it may have (a
 * raw call's answer narrowed by its `error` has those of a success, or the others):
 * `decodeHeaders()` of another operation does not compile with it. A plain Response is one of
 * every operation, of any status.
 */
export type OperationResponse<O extends Operation, S = Status<Responses<O>>> = Response & { readonly [answeredBy]?: { readonly operation: O, readonly status: S } }

/**
 * A raw call's answer (openapi-fetch's: a success, or an error body), its response typed by its
 * operation and by the statuses of its branch.
 */
export type Answered<A, O extends Operation> = A extends unknown
  ? A & { response: OperationResponse<O, object extends Pick<A, 'error' & keyof A> ? SuccessStatus<Responses<O>> : ErrorStatus<Responses<O>>> }
  : never
