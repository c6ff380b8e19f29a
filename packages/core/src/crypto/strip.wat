;; Removes Java's `\s` bytes (0x20, 0x09-0x0D) from a buffer, in place, 16 bytes at a time.
;;
;; Memory layout
;;   [0, 2048)     LO: for each 8-bit mask m, the indices 0-7 of the bits clear in m (the bytes
;;                 kept), in order, 8 bytes an entry; unused trailing slots are 0.
;;   [2048, 4096)  HI: the same with every index + 8, for a block's upper half: a second table
;;                 rather than an i8x16.add per block.
;;   [4096, 4112)  NIBBLE and [4112, 4128) LOW4, the classification's two constants (below).
;;   [4128, ...)   the body, copied in by the caller (the address is exported as `input`). The
;;                 caller leaves 16 bytes of memory after the body: the last, partial block is
;;                 read whole (see $block).
;;
;; Why in place is safe: the output position never passes the input position, and a block's
;; stores end at most at out + 16 <= in + 16, the end of the block just loaded. No store reaches
;; a byte not yet read.
;;
;; Why the code looks like this (measured on Node 20 / V8 11.3, x64):
;; - V8 rebuilds a v128.const at its use, inside the loop too (3-5 instructions each, every
;;   iteration), even when the constant was put in a local before the loop. A value loaded from
;;   memory before the loop stays in a register, so the loop's two constants live in memory.
;; - V8 does not inline Wasm calls, so the hot loop spells out the block code twice; the function
;;   $block serves only the tail.
;; - Two blocks an iteration halve the loop overhead (V8 adds a stack check to every loop).
;; - One branch an iteration: 32 bytes without whitespace are copied as they are (compact
;;   bodies, long values). Everything else goes through the shuffle without further branches:
;;   in pretty JSON blocks with and without whitespace alternate unpredictably, and per-block
;;   fast paths (mask 0, mask 0xFFFF) cost ~20 % there through mispredictions.
(module
  (memory (export "memory") 1)

  (global (export "input") i32 (i32.const 4128))

  ;; Fills the tables once per instance, at instantiation. A loop rather than a data segment so
  ;; their meaning stays readable here; it costs ~20 us per instance, which only matters if
  ;; instances were made per call.
  (func $init
    (local $m i32) (local $bit i32) (local $k i32)
    (v128.store (i32.const 4096) (v128.const i8x16 0x20 0 0 0 0 0 0 0 0 0x09 0x0A 0x0B 0x0C 0x0D 0 0))
    (v128.store (i32.const 4112) (v128.const i8x16 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15))
    (loop $masks
      (local.set $bit (i32.const 0))
      (local.set $k (i32.const 0))
      (loop $bits
        (if (i32.eqz (i32.and (i32.shr_u (local.get $m) (local.get $bit)) (i32.const 1)))
          (then
            (i32.store8 (i32.add (i32.shl (local.get $m) (i32.const 3)) (local.get $k))
              (local.get $bit))
            (i32.store8 offset=2048 (i32.add (i32.shl (local.get $m) (i32.const 3)) (local.get $k))
              (i32.add (local.get $bit) (i32.const 8)))
            (local.set $k (i32.add (local.get $k) (i32.const 1)))))
        (local.set $bit (i32.add (local.get $bit) (i32.const 1)))
        (br_if $bits (i32.lt_u (local.get $bit) (i32.const 8))))
      (local.set $m (i32.add (local.get $m) (i32.const 1)))
      (br_if $masks (i32.lt_u (local.get $m) (i32.const 256)))))
  (start $init)

  ;; CLASSIFY x -> mask, bit i set when byte i is whitespace: one lookup on the low nibble.
  ;;   bitmask(swizzle(NIBBLE, x & 0x0F) == x)
  ;; NIBBLE[n] is the one whitespace byte whose low nibble is n (0x20 at 0, 0x09-0x0D at 9-13),
  ;; and 0 elsewhere, which no byte with that nibble can equal (it would be 0x00, nibble 0).
  ;; Four vector instructions; the alternative (x == 0x20) | (swizzle(T, x) == x) takes five.
  ;;
  ;; COMPRESS x, mask -> out: each 8-byte half is packed by one shuffle whose indices come from
  ;; LO[mask & 0xFF] and HI[mask >> 8], and stored as 8 bytes; the position advances by the
  ;; count kept (8 - popcount), so the next store overwrites the half's leftover lanes.

  ;; One block, for the tail: its first `valid` lanes are body (16 or more: all of them), the
  ;; rest are treated as whitespace, so whatever they hold (a previous call's body) never
  ;; reaches the output. 0xFFFF << valid keeps no bit in the low 16 for valid 16-31.
  (func $block (param $x v128) (param $valid i32) (param $out i32) (result i32)
    (local $m i32) (local $lo i32) (local $hi i32) (local $y v128)
    (local.set $m
      (i32.or
        (i8x16.bitmask
          (i8x16.eq (local.get $x)
            (i8x16.swizzle (v128.load (i32.const 4096))
              (v128.and (local.get $x) (v128.load (i32.const 4112))))))
        (i32.and (i32.shl (i32.const 0xFFFF) (local.get $valid)) (i32.const 0xFFFF))))
    (local.set $lo (i32.and (local.get $m) (i32.const 0xFF)))
    (local.set $hi (i32.shr_u (local.get $m) (i32.const 8)))
    (local.set $y
      (i8x16.swizzle (local.get $x)
        (v128.load64_lane offset=2048 1 (i32.shl (local.get $hi) (i32.const 3))
          (v128.load64_zero (i32.shl (local.get $lo) (i32.const 3))))))
    (v128.store64_lane 0 (local.get $out) (local.get $y))
    (local.set $out (i32.sub (i32.add (local.get $out) (i32.const 8)) (i32.popcnt (local.get $lo))))
    (v128.store64_lane 1 (local.get $out) (local.get $y))
    (i32.sub (i32.add (local.get $out) (i32.const 8)) (i32.popcnt (local.get $hi))))

  ;; strip(ptr, len) -> new length; the result is at [ptr, ptr + new length). Needs ptr >= 4128
  ;; (past the tables) and 16 bytes of memory after ptr + len.
  (func (export "strip") (param $ptr i32) (param $len i32) (result i32)
    (local $in i32) (local $out i32) (local $end i32) (local $rest i32)
    (local $nibble v128) (local $low4 v128)
    (local $x0 v128) (local $x1 v128) (local $m0 i32) (local $m1 i32)
    (local $y v128) (local $lo i32) (local $hi i32)
    (local.set $nibble (v128.load (i32.const 4096)))
    (local.set $low4 (v128.load (i32.const 4112)))
    (local.set $in (local.get $ptr))
    (local.set $out (local.get $ptr))
    (local.set $end (i32.add (local.get $ptr) (local.get $len)))
    (block $done
      (loop $pairs
        ;; At least 32 bytes left (no underflow: $end >= 4128).
        (br_if $done (i32.gt_u (local.get $in) (i32.sub (local.get $end) (i32.const 32))))
        (local.set $x0 (v128.load (local.get $in)))
        (local.set $x1 (v128.load offset=16 (local.get $in)))
        (local.set $in (i32.add (local.get $in) (i32.const 32)))
        (local.set $m0   ;; CLASSIFY
          (i8x16.bitmask (i8x16.eq (local.get $x0)
            (i8x16.swizzle (local.get $nibble) (v128.and (local.get $x0) (local.get $low4))))))
        (local.set $m1   ;; CLASSIFY
          (i8x16.bitmask (i8x16.eq (local.get $x1)
            (i8x16.swizzle (local.get $nibble) (v128.and (local.get $x1) (local.get $low4))))))
        (if (i32.eqz (i32.or (local.get $m0) (local.get $m1)))
          (then
            (v128.store (local.get $out) (local.get $x0))
            (v128.store offset=16 (local.get $out) (local.get $x1))
            (local.set $out (i32.add (local.get $out) (i32.const 32)))
            (br $pairs)))
        ;; COMPRESS block 0
        (local.set $lo (i32.and (local.get $m0) (i32.const 0xFF)))
        (local.set $hi (i32.shr_u (local.get $m0) (i32.const 8)))
        (local.set $y
          (i8x16.swizzle (local.get $x0)
            (v128.load64_lane offset=2048 1 (i32.shl (local.get $hi) (i32.const 3))
              (v128.load64_zero (i32.shl (local.get $lo) (i32.const 3))))))
        (v128.store64_lane 0 (local.get $out) (local.get $y))
        (local.set $out (i32.sub (i32.add (local.get $out) (i32.const 8)) (i32.popcnt (local.get $lo))))
        (v128.store64_lane 1 (local.get $out) (local.get $y))
        (local.set $out (i32.sub (i32.add (local.get $out) (i32.const 8)) (i32.popcnt (local.get $hi))))
        ;; COMPRESS block 1
        (local.set $lo (i32.and (local.get $m1) (i32.const 0xFF)))
        (local.set $hi (i32.shr_u (local.get $m1) (i32.const 8)))
        (local.set $y
          (i8x16.swizzle (local.get $x1)
            (v128.load64_lane offset=2048 1 (i32.shl (local.get $hi) (i32.const 3))
              (v128.load64_zero (i32.shl (local.get $lo) (i32.const 3))))))
        (v128.store64_lane 0 (local.get $out) (local.get $y))
        (local.set $out (i32.sub (i32.add (local.get $out) (i32.const 8)) (i32.popcnt (local.get $lo))))
        (v128.store64_lane 1 (local.get $out) (local.get $y))
        (local.set $out (i32.sub (i32.add (local.get $out) (i32.const 8)) (i32.popcnt (local.get $hi))))
        (br $pairs)))
    ;; The last 0-31 bytes, as up to two partial blocks. The first is read whole even when it
    ;; is shorter (the caller's 16 spare bytes); the second only exists if 17+ bytes are left,
    ;; and is loaded after the first's stores, which (out <= in) end before it starts.
    (local.set $rest (i32.sub (local.get $end) (local.get $in)))
    (if (local.get $rest)
      (then
        (local.set $out (call $block (v128.load (local.get $in)) (local.get $rest) (local.get $out)))
        (if (i32.gt_u (local.get $rest) (i32.const 16))
          (then
            (local.set $out
              (call $block (v128.load offset=16 (local.get $in))
                (i32.sub (local.get $rest) (i32.const 16)) (local.get $out)))))))
    (i32.sub (local.get $out) (local.get $ptr)))
)
