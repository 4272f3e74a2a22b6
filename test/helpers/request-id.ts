// What the tests of lib/request-id.ts read a new id by: in-process in
// test/plugins/request-id.test.ts, from fresh processes in test/system/request-id.test.ts.

/** A new id: the process's 24 hex digits, then its counter. */
export const NEW_ID = /^([0-9a-f]{24})-([1-9][0-9]*)$/
