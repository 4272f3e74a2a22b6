/** A call waiting for its batch: its input, and how to settle it. */
interface Call<I, O> {
  input: I
  resolve: (output: O) => void
  reject: (err: unknown) => void
}

/** How a Batcher groups its calls. */
export interface BatchOptions<I> {
  /** The statements of this kind that may be in flight at once; the calls made meanwhile wait and go together. */
  concurrency: number
  /** The most calls in one statement. */
  maxCalls: number
  /** With `weight`: the most weight in one statement (a call heavier alone goes alone). */
  maxWeight?: number
  weight?: (input: I) => number
}

/**
 * Calls of one kind (reads by id, inserts) that go to the database together, as one statement:
 * those made while the event loop runs its callbacks leave at once, after them (setImmediate); while
 * `concurrency` statements are in flight, the next calls wait, and leave together when one ends.
 * Under load a statement serves many requests, and what a statement costs this process (the pool's
 * checkout, the driver's query, a write on the socket that wakes the server, the messages it
 * answers) is paid once for them all; alone, a call waits for no one. `run` answers the outputs
 * in the order of the inputs; its failure is every call's.
 */
export class Batcher<I, O> {
  readonly #run: (inputs: I[]) => Promise<O[]>
  readonly #options: BatchOptions<I>
  #pending: Array<Call<I, O>> = []
  #inFlight = 0
  #scheduled = false
  readonly #flush = () => {
    this.#scheduled = false
    this.#send()
  }

  constructor (run: (inputs: I[]) => Promise<O[]>, options: BatchOptions<I>) {
    this.#run = run
    this.#options = options
  }

  add (input: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.#pending.push({ input, resolve, reject })
      if (!this.#scheduled && this.#inFlight < this.#options.concurrency) {
        this.#scheduled = true
        setImmediate(this.#flush)
      }
    })
  }

  /** The next statements, while there are calls and room in flight. */
  #send (): void {
    while (this.#pending.length > 0 && this.#inFlight < this.#options.concurrency) {
      const batch = this.#pending.splice(0, this.#size())
      this.#inFlight++
      this.#run(batch.map((call) => call.input)).then((outputs) => {
        for (let i = 0; i < batch.length; i++) batch[i]!.resolve(outputs[i] as O)
      }, (err: unknown) => {
        for (const call of batch) call.reject(err)
      }).finally(() => {
        this.#inFlight--
        this.#send()
      })
    }
  }

  /** How many of the pending calls the next statement takes: at least one. */
  #size (): number {
    const { maxCalls, maxWeight, weight } = this.#options
    const most = Math.min(maxCalls, this.#pending.length)
    if (weight === undefined || maxWeight === undefined) return most
    let count = 0
    for (let total = 0; count < most; count++) {
      total += weight(this.#pending[count]!.input)
      if (total > maxWeight && count > 0) break
    }
    return count
  }
}
