import { Type } from '@sinclair/typebox'

/** `GET /health`: the process runs. */
export const HealthSchema = Type.Object({
  status: Type.Literal('ok')
}, { examples: [{ status: 'ok' }] })

/** `GET /ready`: this replica takes requests. */
export const ReadySchema = Type.Object({
  status: Type.Literal('ready')
}, { examples: [{ status: 'ready' }] })
