// What one `pnpm bench` run measures: written by bench/run.ts into docs/benchmarks.json, read by bench/report.ts.
import type { AdversarialFigures } from './adversarial.ts'
import type { HandoffFigures } from './handoff.ts'
import type { HttpResult } from './http.ts'
import type { InspectFigures } from './inspect.ts'
import type { InstructionsResult } from './instructions.ts'
import type { PayloadResult } from './measure.ts'
import type { AllocationResult, MemoryResult } from './memory.ts'

export interface WebRun {
  runtime: string
  /** Which stripper the build used there (`whitespaceStripper()`). */
  stripper?: string
  results: PayloadResult[]
}

export interface Figures {
  date: string
  quick: boolean
  machine: Record<string, string>
  versions: Record<string, string>
  load: { before: string; after: string }
  micro?: { runtime: string; results: PayloadResult[] }
  memory?: { runtime: string; size: number; wasmRetained?: number; results: MemoryResult[]; allocation?: AllocationResult }
  web?: WebRun[]
  http?: { runtime: string; durationS: number; sliceS?: number; rounds: number; results: HttpResult[] }
  instructions?: { runtime: string; warmup: number; requests: number; connections: number; results: InstructionsResult[] }
  adversarial?: AdversarialFigures
  inspect?: InspectFigures
  handoff?: HandoffFigures
}
