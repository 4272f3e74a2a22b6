/** The items of an NDJSON body, one per line, parsed as they arrive. */
export async function * ndjsonItems<T> (body: ReadableStream<Uint8Array>): AsyncGenerator<T, void, undefined> {
  const decoder = new TextDecoder()
  let pending = ''
  const reader = body.getReader()
  try {
    for (;;) {
      const { done, value } = await reader.read()
      pending += decoder.decode(value, { stream: !done })
      const lines = pending.split('\n')
      pending = lines.pop() as string
      for (const line of lines) if (line !== '') yield JSON.parse(line) as T
      if (done) break
    }
    if (pending !== '') yield JSON.parse(pending) as T
  } finally {
    // A consumer that stops early closes the stream: the server stops producing.
    await reader.cancel().catch(() => {})
  }
}
