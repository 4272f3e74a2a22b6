import http from 'node:http'

// The client of the shutdown tests (plugins/shutdown.ts): in-process in
// test/plugins/shutdown.test.ts, against the production entry in test/system/shutdown.test.ts.

export interface Answer {
  status: number
  headers: http.IncomingHttpHeaders
  body: string
  /** The body arrived whole: the response ended, it was not cut. */
  complete: boolean
}

/** A GET on `agent` (a keep-alive agent keeps one connection for a client's requests). */
export function get (url: string, agent: http.Agent | false = false): Promise<Answer> {
  return new Promise((resolve, reject) => {
    http.get(url, { agent }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => { body += chunk })
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body, complete: res.complete }))
      res.on('error', reject)
    }).on('error', reject)
  })
}
