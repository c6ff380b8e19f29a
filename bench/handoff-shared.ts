// What the hand-off benchmark's processes share.
export const SECRET = 'whsec-bench-handoff-0a91c3'
export const HANDOFF_QUEUE = 'bench-deliveries'
