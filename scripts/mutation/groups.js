// What `npm run mutation` mutates: the pure modules of lib/ and of the client, in groups, each module with the unit
// tests that must kill its mutants. Only those tests run for a mutant of the module (StrykerJS's
// command runner cannot pick tests per mutant), so a module's score says what its own tests hold.
export const GROUPS = {
  range: [
    { mutate: 'lib/range/grammar.ts', tests: ['test/lib/range/grammar.test.ts'] },
    { mutate: 'lib/range/keyed.ts', tests: ['test/lib/range/keyed.test.ts'] },
    { mutate: 'lib/range/rangeable.ts', tests: ['test/lib/range/rangeable.test.ts'] },
    { mutate: 'lib/range/select.ts', tests: ['test/lib/range/select.test.ts'] },
    { mutate: 'lib/range/pattern.ts', tests: ['test/lib/range/pattern.test.ts'] }
  ],
  description: [
    { mutate: 'lib/description/render.ts', tests: ['test/lib/description/render.test.ts'] },
    { mutate: 'lib/description/routes.ts', tests: ['test/lib/description/render.test.ts'] }
  ],
  config: [
    { mutate: 'lib/config/env-file.ts', tests: ['test/lib/config/env-file.test.ts'] },
    { mutate: 'lib/config/load.ts', tests: ['test/lib/config/load.test.ts'] },
    { mutate: 'lib/config/schema.ts', tests: ['test/lib/config/schema.test.ts', 'test/lib/config/load.test.ts'] },
    { mutate: 'lib/config/trust-proxy.ts', tests: ['test/lib/config/trust-proxy.test.ts'] },
    { mutate: 'lib/config/unknown-settings.ts', tests: ['test/lib/config/unknown-settings.test.ts'] }
  ],
  client: [
    { mutate: 'client/range.ts', tests: ['test/client/range.test.ts'] },
    { mutate: 'client/headers.ts', tests: ['test/client/headers.test.ts'] },
    { mutate: 'client/errors.ts', tests: ['test/client/headers.test.ts'] },
    { mutate: 'client/retry.ts', tests: ['test/client/retry.test.ts'] }
  ],
  'list bodies': [
    { mutate: 'lib/pull-stream.ts', tests: ['test/lib/pull-stream.test.ts'] },
    { mutate: 'lib/list-body.ts', tests: ['test/lib/list-body.test.ts'] },
    { mutate: 'lib/ndjson-body.ts', tests: ['test/plugins/ndjson.test.ts'] }
  ],
  'failed logins': [
    { mutate: 'lib/client-address.ts', tests: ['test/lib/client-address.test.ts'] },
    { mutate: 'lib/auth-failures.ts', tests: ['test/lib/auth-failures.test.ts', 'test/lib/memory/auth-failures.test.ts'] },
    { mutate: 'lib/memory/auth-failures.ts', tests: ['test/lib/memory/auth-failures.test.ts', 'test/lib/auth-failures.test.ts'] }
  ],
  requests: [
    { mutate: 'lib/wire.ts', tests: ['test/lib/wire.test.ts', 'test/plugins/validation.test.ts'] },
    { mutate: 'lib/body-limit.ts', tests: ['test/lib/body-limit.test.ts'] },
    { mutate: 'lib/query-redaction.ts', tests: ['test/lib/query-redaction.test.ts'] }
  ],
  stores: [
    { mutate: 'lib/memory/repository.ts', tests: ['test/lib/memory/repository.test.ts'] },
    { mutate: 'lib/postgres/batcher.ts', tests: ['test/lib/postgres/batcher.test.ts'] },
    { mutate: 'lib/postgres/sort-keys.ts', tests: ['test/lib/postgres/sort-keys.test.ts'] }
  ]
}

/** The unit of a module, by its path. */
export function unitOf (module) {
  const unit = Object.values(GROUPS).flat().find((candidate) => candidate.mutate === module)
  if (unit === undefined) throw new Error(`MUTATE: one of ${Object.values(GROUPS).flat().map((each) => each.mutate).join(', ')}`)
  return unit
}
