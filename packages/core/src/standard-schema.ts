import { WebhookError } from './errors.ts'

// The Standard Schema interface (standardschema.dev), version 1: what Zod, Valibot, ArkType and
// others implement under the `~standard` key. Declared here rather than imported so that the core
// keeps no dependency, not even a types-only one that users would have to install.

/** Any validator that implements Standard Schema v1, such as a Zod, Valibot or ArkType schema. */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': StandardSchemaV1.Props<Input, Output>
}

export declare namespace StandardSchemaV1 {
  interface Props<Input = unknown, Output = Input> {
    readonly version: 1
    readonly vendor: string
    readonly validate: (value: unknown) => Result<Output> | Promise<Result<Output>>
    readonly types?: Types<Input, Output> | undefined
  }
  type Result<Output> = SuccessResult<Output> | FailureResult
  interface SuccessResult<Output> {
    readonly value: Output
    readonly issues?: undefined
  }
  interface FailureResult {
    readonly issues: ReadonlyArray<Issue>
  }
  interface Issue {
    readonly message: string
    readonly path?: ReadonlyArray<PropertyKey | PathSegment> | undefined
  }
  interface PathSegment {
    readonly key: PropertyKey
  }
  interface Types<Input = unknown, Output = Input> {
    readonly input: Input
    readonly output: Output
  }
  /** What a schema produces once it has validated. */
  type InferOutput<Schema extends StandardSchemaV1> = NonNullable<Schema['~standard']['types']>['output']
}

/** At most this many failing paths are reported: a payload cannot make the answer grow without end. */
const MAX_PATHS = 10
/** A key longer than this is cut: keys come from the sender's body. */
const MAX_KEY_LENGTH = 64

/**
 * Validates a verified payload with the user's schema: its output, or a 422 `invalid_payload` that
 * names where the payload failed and never what it held. Validators' messages are left out on
 * purpose: many quote the value they refused ("received 'x'").
 */
export async function validatePayload<Output>(schema: StandardSchemaV1<unknown, Output>, payload: unknown): Promise<Output> {
  const result = await schema['~standard'].validate(payload)
  if (result.issues === undefined) return result.value
  const paths = [...new Set(result.issues.map((issue) => formatPath(issue.path)))].slice(0, MAX_PATHS)
  return Promise.reject(
    new WebhookError('invalid_payload', `The payload does not match the expected schema at: ${paths.join(', ')}.`, { paths }),
  )
}

/** A path as a reader writes it: `customer.mobile`, `items[0].id`; `(root)` for the payload itself. */
export function formatPath(path: StandardSchemaV1.Issue['path']): string {
  if (path === undefined || path.length === 0) return '(root)'
  let text = ''
  for (const segment of path) {
    const key = typeof segment === 'object' && segment !== null ? segment.key : segment
    if (typeof key === 'number') text += `[${key}]`
    else {
      const name = String(key)
      const cut = name.length > MAX_KEY_LENGTH ? `${name.slice(0, MAX_KEY_LENGTH)}…` : name
      text += /^[A-Za-z_$][\w$]*$/.test(cut) ? `${text === '' ? '' : '.'}${cut}` : `[${JSON.stringify(cut)}]`
    }
  }
  return text
}
