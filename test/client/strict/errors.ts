// Compiled by test/system/client-package.test.ts in a project that installed the packed client, strict
// and without Node's types: every line type-checks but those marked @ts-expect-error, which must not.
import { ApiError, isApiError, unwrap, type ApiClient, type ErrorBody, type OperationError } from 'servant-example-api-client'

/** A caught error is unknown until narrowed: by operation, the status then tells the body's type. */
export async function caught (api: ApiClient): Promise<string> {
  try {
    return (await unwrap(api.GET('/users/{userid}', { params: { path: { userid: 7 } } }))).name
  } catch (err) {
    if (isApiError(err, 'GET /users/{userid}')) {
      const body: ErrorBody = err.body
      // @ts-expect-error: a typo in a field of the error body
      console.log(err.body.mesage)
      // @ts-expect-error: GET /users/{userid} documents no 401
      if (err.status === 401) console.log(err.body)
      if (err.status === 404) return `${body.message} (${err.body.statusCode}, ${err.operation})`
    }
    if (isApiError(err, 'GET /failing') && err.status === 503) {
      // GET /failing's 503 is text.
      const text: string = err.body
      // @ts-expect-error: a text has no `message`
      console.log(err.body.message)
      return text
    }
    // @ts-expect-error: not an operation of the API
    if (isApiError(err, 'GET /nowhere')) return 'never'
    if (err instanceof ApiError) {
      // @ts-expect-error: only an HTTP error has a status
      console.log(err.status)
      switch (err.kind) {
        case 'http':
          // @ts-expect-error: the body of an HTTP error of no known operation is unknown
          console.log(err.body.message)
          return `${err.status} ${err.response.statusText}`
        case 'network': return `no answer: ${String(err.cause)}`
        case 'aborted': return `aborted: ${String(err.cause)}`
        case 'timeout': return `no answer within ${err.timeout ?? '?'} ms`
        case 'decode':
          // @ts-expect-error: a decode error has no status
          console.log(err.status)
          return `unreadable: ${err.response?.status ?? 'no response'}`
      }
    }
    throw err
  }
}

/** OperationError: one ApiError per documented error status, each with its body. */
export function statuses (err: OperationError<'GET /myfile.txt'>): string {
  // @ts-expect-error: GET /myfile.txt's 404 is text, its other errors JSON
  const message: string = err.body.message
  if (err.status === 404) return err.body.toUpperCase()
  return `${err.body.message} ${message}`
}
