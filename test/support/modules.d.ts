// The suite runs older majors under npm aliases; they share the current majors' public API.

declare module 'express4' {
  import express from 'express'
  export default express
}

declare module 'koa2' {
  import Koa = require('koa')
  export = Koa
}

declare module 'koa-bodyparser' {
  import type { Middleware } from 'koa'
  export default function bodyParser(options?: Record<string, unknown>): Middleware
}
