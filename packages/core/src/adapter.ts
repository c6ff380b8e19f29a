// `@hookguard/core/adapter`: the building blocks for an adapter to another framework, and for
// tools that speak the service's protocol (the emulator). An adapter turns its framework's request
// into an `IncomingRequest`, calls a receiver from `createReceiver`, and writes the
// `WebhookResponse` it gets back; these help with the parts that differ per framework.
export type { BasicCredentials } from './basic.ts'
export { basicChallenge, formatBasicAuthorization, parseBasicAuthorization } from './basic.ts'
export { declaredBodyLength, readLimited } from './body.ts'
export { BodyBytes } from './body-bytes.ts'
export { escapeLikeGson, stripUnicodeWhitespace } from './canonical.ts'
export { timingSafeEqual } from './constant-time.ts'
export { payloadTooLarge, rawBodyUnavailable } from './errors.ts'
export type { FetchIncomingRequest, FetchRequestReading } from './fetch.ts'
export { fromFetchRequest, toFetchResponse } from './fetch.ts'
export { nestsDeeperThan } from './json.ts'
export { urlForLog } from './log-url.ts'
export { checkOnError } from './options.ts'
export type { Receiver, ReceiverSetup, VerifyResult } from './receiver.ts'
export type { BodySource, HeaderSource, IncomingRequest } from './request.ts'
export { readHeader } from './request.ts'
export type { WebhookResponse } from './response.ts'
export { stripJavaWhitespace } from './strip.ts'
export type { StripperKind } from './stripper.ts'
export { whitespaceStripper } from './stripper.ts'
