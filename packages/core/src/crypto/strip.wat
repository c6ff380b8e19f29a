;; Four kernels over one memory, for both builds (wasm-strip.ts):
;; - `strip` removes Java's `\s` bytes (0x20, 0x09-0x0D) from a buffer, in place, 16 bytes at a
;;   time: the service's canonical text; and tells in `joined` whether taking them out joined
;;   bytes into a character.
;; - `gson` makes the Gson fallback's text (canonical.ts, gsonCandidate): Gson's HTML escapes
;;   applied and Java's whitespace removed, into a second buffer. One module rather than two so
;;   there is one instance and one memory, and `gson` reuses `strip`'s tables for its blocks
;;   without an escape.
;; - `scan` tells whether a buffer holds any of those bytes, without a store: a compact body's
;;   exact check (crypto/node.ts), one pass over its copy here.
;; - `unicode` removes every Unicode whitespace character (canonical.ts, stripUnicodeWhitespace),
;;   in place: the form of `unicodeWhitespace: true`.
;;
;; Memory layout
;;   [0, 2048)     LO: for each 8-bit mask m, the indices 0-7 of the bits clear in m (the bytes
;;                 kept), in order, 8 bytes an entry; unused trailing slots are 0.
;;   [2048, 4096)  HI: the same with every index + 8, for a block's upper half: a second table
;;                 rather than an i8x16.add per block.
;;   [4096, 4112)  NIBBLE and [4112, 4128) LOW4, the classification's two constants (below).
;;   [4128, 4144)  ESCAPES: NIBBLE's counterpart for the bytes `gson` must look at (below).
;;   [4144, 4400)  ADV: for each byte, how far `gson`'s output advances past it: 1 copied, 0
;;                 removed (Java whitespace), 6 escaped (< > & = ').
;;   [4400, 6464)  ENTRY: for each byte, the 8 bytes `gson` stores for it: the byte itself, or its
;;                 escape in the first 6 (`\u003c` at '<' and so on); then two more entries,
;;                 256 and 257, `\u2028` and `\u2029` for U+2028 and U+2029 (E2 80 A8/A9).
;;   [6464, 6480)  ASCII: ESCAPES without E2, for `gson`'s blocks (its escapes as a mask).
;;   [6480, 6544)  E2, 80, 01 and A9 in every lane: `gson` matches U+2028/9 in a block with them;
;;                 `unicode` reads the first two too.
;;   [6544, 6816)  FC, 1C, C2, 85, A0, E1, 9A, 8B, FE, A8, AF, 81, 9F, E3, EF, BB and BF in every
;;                 lane, in that order, 16 bytes each: what `unicode` compares each lane with.
;;   [6816, 6832)  C0 in every lane: `strip` tells a continuation byte (0x80-0xBF) as a signed
;;                 byte below it.
;;   [6832, ...)   the body, copied in by the caller (the address is exported as `input`). The
;;                 caller leaves 16 bytes of memory after the body (18 for `unicode`): the last,
;;                 partial block is read whole (see $block). `gson` writes its text elsewhere (see
;;                 there).
;;
;; Why `strip` in place is safe: the output position never passes the input position, and a block's
;; stores end at most at out + 16 <= in + 16, the end of the block just loaded. No store reaches
;; a byte not yet read.
;;
;; Why `strip` looks like this (measured on Node 20 / V8 11.3, x64):
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
  (memory (export "memory") 2)

  (global (export "input") i32 (i32.const 6832))
  ;; After `strip`: not 0 when some whitespace byte it removed stood right before a continuation
  ;; byte (0x80-0xBF), so that taking it out joined what was left into a character nobody
  ;; signed (`E4 20 B8 AD` is 中 without its space); else 0. In a body that is UTF-8 no
  ;; whitespace byte ever stands there, and signature.ts refuses one where it does.
  (global $joined (export "joined") (mut i32) (i32.const 0))

  ;; Fills the tables once per instance, at instantiation. A loop rather than a data segment so
  ;; their meaning stays readable here; it costs ~20 us per instance, which only matters if
  ;; instances were made per call.
  (func $init
    (local $m i32) (local $bit i32) (local $k i32)
    (v128.store (i32.const 4096) (v128.const i8x16 0x20 0 0 0 0 0 0 0 0 0x09 0x0A 0x0B 0x0C 0x0D 0 0))
    (v128.store (i32.const 4112) (v128.const i8x16 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15))
    ;; ESCAPES[n] is the one byte `gson` looks at whose low nibble is n: E2 at 2, ' at 7, & at 6,
    ;; < = > at 12-14; 1 at 0 and 0 elsewhere, which no byte with that nibble can equal.
    (v128.store (i32.const 4128) (v128.const i8x16 1 0 0xE2 0 0 0 0x26 0x27 0 0 0 0 0x3C 0x3D 0x3E 0))
    ;; ADV 1 and ENTRY the byte itself, for every byte; then the exceptions.
    (loop $bytes
      (i32.store8 offset=4144 (local.get $k) (i32.const 1))
      (i64.store offset=4400 (i32.shl (local.get $k) (i32.const 3)) (i64.extend_i32_u (local.get $k)))
      (local.set $k (i32.add (local.get $k) (i32.const 1)))
      (br_if $bytes (i32.lt_u (local.get $k) (i32.const 256))))
    (i32.store8 offset=4144 (i32.const 0x20) (i32.const 0))
    (i32.store8 offset=4144 (i32.const 0x09) (i32.const 0))
    (i32.store8 offset=4144 (i32.const 0x0A) (i32.const 0))
    (i32.store8 offset=4144 (i32.const 0x0B) (i32.const 0))
    (i32.store8 offset=4144 (i32.const 0x0C) (i32.const 0))
    (i32.store8 offset=4144 (i32.const 0x0D) (i32.const 0))
    ;; Each escape: the byte, and the escape's last two characters, little-endian ('3' 'c' is 0x6333).
    (call $escape (i32.const 0x3C) (i64.const 0x6333))
    (call $escape (i32.const 0x3E) (i64.const 0x6533))
    (call $escape (i32.const 0x26) (i64.const 0x3632))
    (call $escape (i32.const 0x3D) (i64.const 0x6433))
    (call $escape (i32.const 0x27) (i64.const 0x3732))
    ;; U+2028 and U+2029: entries 256 and 257.
    (i64.store offset=4400 (i32.const 0x800) (i64.const 0x3832_3032_755C))   ;; 256 * 8: \u2028
    (i64.store offset=4400 (i32.const 0x808) (i64.const 0x3932_3032_755C))   ;; 257 * 8: \u2029
    ;; ASCII: ESCAPES without E2 (0 at nibble 2, which no byte with that nibble can equal); then
    ;; the bytes U+2028/9 is matched with, each in every lane, and 01 (A8 | 01 is A9).
    (v128.store (i32.const 6464) (v128.const i8x16 1 0 0 0 0 0 0x26 0x27 0 0 0 0 0x3C 0x3D 0x3E 0))
    (v128.store (i32.const 6480) (i8x16.splat (i32.const 0xE2)))
    (v128.store (i32.const 6496) (i8x16.splat (i32.const 0x80)))
    (v128.store (i32.const 6512) (i8x16.splat (i32.const 0x01)))
    (v128.store (i32.const 6528) (i8x16.splat (i32.const 0xA9)))
    ;; `unicode`'s.
    (v128.store (i32.const 6544) (i8x16.splat (i32.const 0xFC)))
    (v128.store (i32.const 6560) (i8x16.splat (i32.const 0x1C)))
    (v128.store (i32.const 6576) (i8x16.splat (i32.const 0xC2)))
    (v128.store (i32.const 6592) (i8x16.splat (i32.const 0x85)))
    (v128.store (i32.const 6608) (i8x16.splat (i32.const 0xA0)))
    (v128.store (i32.const 6624) (i8x16.splat (i32.const 0xE1)))
    (v128.store (i32.const 6640) (i8x16.splat (i32.const 0x9A)))
    (v128.store (i32.const 6656) (i8x16.splat (i32.const 0x8B)))
    (v128.store (i32.const 6672) (i8x16.splat (i32.const 0xFE)))
    (v128.store (i32.const 6688) (i8x16.splat (i32.const 0xA8)))
    (v128.store (i32.const 6704) (i8x16.splat (i32.const 0xAF)))
    (v128.store (i32.const 6720) (i8x16.splat (i32.const 0x81)))
    (v128.store (i32.const 6736) (i8x16.splat (i32.const 0x9F)))
    (v128.store (i32.const 6752) (i8x16.splat (i32.const 0xE3)))
    (v128.store (i32.const 6768) (i8x16.splat (i32.const 0xEF)))
    (v128.store (i32.const 6784) (i8x16.splat (i32.const 0xBB)))
    (v128.store (i32.const 6800) (i8x16.splat (i32.const 0xBF)))
    (v128.store (i32.const 6816) (i8x16.splat (i32.const 0xC0)))
    (local.set $k (i32.const 0))
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

  ;; ADV[byte] = 6, ENTRY[byte] = `\u00` and the two hex digits.
  (func $escape (param $byte i32) (param $hex i64)
    (i32.store8 offset=4144 (local.get $byte) (i32.const 6))
    (i64.store offset=4400 (i32.shl (local.get $byte) (i32.const 3))
      (i64.or (i64.const 0x3030_755C) (i64.shl (local.get $hex) (i64.const 32)))))

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

  ;; strip(ptr, len) -> new length; the result is at [ptr, ptr + new length). Needs ptr >= 6544
  ;; (past the tables) and 16 bytes of memory after ptr + len.
  ;;
  ;; JOINS, for `joined`: each block is loaded again one byte further on, so that lane i holds the
  ;; byte after byte i, and a lane that is whitespace (CLASSIFY's compare, before its bitmask) and
  ;; whose next byte is a continuation byte (a signed byte below 0xC0: one compare) is OR-ed into
  ;; $joins. Only pairs that hold whitespace need it, so the copy branch does nothing more. The
  ;; byte after the body is set to 0 first: it is read as the last byte's next, and must not count.
  (func (export "strip") (param $ptr i32) (param $len i32) (result i32)
    (local $in i32) (local $out i32) (local $end i32) (local $rest i32)
    (local $nibble v128) (local $low4 v128) (local $c0 v128)
    (local $x0 v128) (local $x1 v128) (local $m0 i32) (local $m1 i32)
    (local $y v128) (local $lo i32) (local $hi i32)
    (local $w0 v128) (local $w1 v128) (local $joins v128) (local $valid i32)
    (local.set $nibble (v128.load (i32.const 4096)))
    (local.set $low4 (v128.load (i32.const 4112)))
    (local.set $c0 (v128.load (i32.const 6816)))
    (local.set $in (local.get $ptr))
    (local.set $out (local.get $ptr))
    (local.set $end (i32.add (local.get $ptr) (local.get $len)))
    (i32.store8 (local.get $end) (i32.const 0))
    (block $done
      (loop $pairs
        ;; At least 32 bytes left (no underflow: $end >= 6544).
        (br_if $done (i32.gt_u (local.get $in) (i32.sub (local.get $end) (i32.const 32))))
        (local.set $x0 (v128.load (local.get $in)))
        (local.set $x1 (v128.load offset=16 (local.get $in)))
        (local.set $in (i32.add (local.get $in) (i32.const 32)))
        (local.set $w0   ;; CLASSIFY
          (i8x16.eq (local.get $x0) (i8x16.swizzle (local.get $nibble) (v128.and (local.get $x0) (local.get $low4)))))
        (local.set $w1   ;; CLASSIFY
          (i8x16.eq (local.get $x1) (i8x16.swizzle (local.get $nibble) (v128.and (local.get $x1) (local.get $low4)))))
        (local.set $m0 (i8x16.bitmask (local.get $w0)))
        (local.set $m1 (i8x16.bitmask (local.get $w1)))
        (if (i32.eqz (i32.or (local.get $m0) (local.get $m1)))
          (then
            (v128.store (local.get $out) (local.get $x0))
            (v128.store offset=16 (local.get $out) (local.get $x1))
            (local.set $out (i32.add (local.get $out) (i32.const 32)))
            (br $pairs)))
        ;; JOINS: the bytes after the pair's, loaded before any store of it ($in is past it now).
        (local.set $joins (v128.or (local.get $joins)
          (v128.or
            (v128.and (local.get $w0) (i8x16.lt_s (v128.load offset=1 (i32.sub (local.get $in) (i32.const 32))) (local.get $c0)))
            (v128.and (local.get $w1) (i8x16.lt_s (v128.load offset=17 (i32.sub (local.get $in) (i32.const 32))) (local.get $c0))))))
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
    ;; JOINS over each block's lanes that are body (valid = 1-31; 16 or more: all of them).
    (local.set $rest (i32.sub (local.get $end) (local.get $in)))
    (if (local.get $rest)
      (then
        (local.set $x0 (v128.load (local.get $in)))
        (local.set $valid (local.get $rest))
        (block $tail
          (loop $blocks
            ;; Lanes past the body masked off: bitmask(JOINS) & ~(0xFFFF << valid).
            (if (i32.and
                  (i8x16.bitmask
                    (v128.and
                      (i8x16.eq (local.get $x0) (i8x16.swizzle (local.get $nibble) (v128.and (local.get $x0) (local.get $low4))))
                      (i8x16.lt_s (v128.load offset=1 (local.get $in)) (local.get $c0))))
                  (i32.xor (i32.and (i32.shl (i32.const 0xFFFF) (local.get $valid)) (i32.const 0xFFFF)) (i32.const 0xFFFF)))
              (then (local.set $joins (v128.const i32x4 -1 -1 -1 -1))))
            (local.set $out (call $block (local.get $x0) (local.get $valid) (local.get $out)))
            (br_if $tail (i32.le_u (local.get $valid) (i32.const 16)))
            (local.set $valid (i32.sub (local.get $valid) (i32.const 16)))
            (local.set $in (i32.add (local.get $in) (i32.const 16)))
            (local.set $x0 (v128.load (local.get $in)))
            (br $blocks)))))
    (global.set $joined (i8x16.bitmask (local.get $joins)))
    (i32.sub (local.get $out) (local.get $ptr)))

;; scan(ptr, len) -> 1 when [ptr, ptr + len) holds any of Java's `\s` bytes, else 0, so that a
  ;; compact body is told canonical in one pass over a copy of it (crypto/node.ts hashes it a
  ;; chunk at a time right after). Needs ptr >= 6544 and 16 bytes of memory after ptr + len: the
  ;; last, partial block is read whole and its lanes past the body masked off, so a previous
  ;; call's bytes there never count.
  ;; Every whitespace byte is <= 0x20, and a compact JSON body holds no such byte at all (JSON
  ;; forbids raw control characters in strings), so the pass only keeps the smallest byte of each
  ;; lane: one i8x16.min_u a block, four blocks an iteration, no branch but the loop's own. It
  ;; costs about half of one memchr, where `strip`'s CLASSIFY costs two. Only when some byte is
  ;; <= 0x20 are the same blocks classified exactly, as `strip` does; a chunk with whitespace is
  ;; stripped next anyway, and a hostile one costs one more pass.
  (func (export "scan") (param $ptr i32) (param $len i32) (result i32)
    (local $in i32) (local $at i32) (local $end i32) (local $rest i32) (local $found i32)
    (local $nibble v128) (local $low4 v128) (local $least v128) (local $least2 v128) (local $any v128) (local $x v128)
    (local.set $in (local.get $ptr))
    (local.set $end (i32.add (local.get $ptr) (local.get $len)))
    (local.set $least (i8x16.splat (i32.const 0xFF)))
    (local.set $least2 (local.get $least))
    (block $done
      (loop $quads
        ;; At least 64 bytes left (no underflow: $end >= 6544).
        (br_if $done (i32.gt_u (local.get $in) (i32.sub (local.get $end) (i32.const 64))))
        (local.set $least (i8x16.min_u (local.get $least) (v128.load (local.get $in))))
        (local.set $least2 (i8x16.min_u (local.get $least2) (v128.load offset=16 (local.get $in))))
        (local.set $least (i8x16.min_u (local.get $least) (v128.load offset=32 (local.get $in))))
        (local.set $least2 (i8x16.min_u (local.get $least2) (v128.load offset=48 (local.get $in))))
        (local.set $in (i32.add (local.get $in) (i32.const 64)))
        (br $quads)))
    (local.set $least (i8x16.min_u (local.get $least) (local.get $least2)))
    (local.set $nibble (v128.load (i32.const 4096)))
    (local.set $low4 (v128.load (i32.const 4112)))
    ;; Some byte <= 0x20 in those blocks: CLASSIFY them, a block at a time.
    (if (i32.eqz (i8x16.all_true (i8x16.gt_u (local.get $least) (i8x16.splat (i32.const 0x20)))))
      (then
        (local.set $at (local.get $ptr))
        (block $classified
          (loop $exact
            (br_if $classified (i32.ge_u (local.get $at) (local.get $in)))
            (local.set $x (v128.load (local.get $at)))
            (local.set $any (v128.or (local.get $any)
              (i8x16.eq (local.get $x) (i8x16.swizzle (local.get $nibble) (v128.and (local.get $x) (local.get $low4))))))
            (local.set $at (i32.add (local.get $at) (i32.const 16)))
            (br $exact)))))
    (local.set $found (v128.any_true (local.get $any)))
    ;; The last 0-63 bytes, a block at a time, classified; a block's lanes past the body masked off.
    (block $tail_done
      (loop $blocks
        (br_if $tail_done (i32.ge_u (local.get $in) (local.get $end)))
        (local.set $x (v128.load (local.get $in)))
        (local.set $rest (i32.sub (local.get $end) (local.get $in)))
        (local.set $found
          (i32.or (local.get $found)
            (i32.ne (i32.const 0)
              (i32.and
                (i8x16.bitmask
                  (i8x16.eq (local.get $x) (i8x16.swizzle (local.get $nibble) (v128.and (local.get $x) (local.get $low4)))))
                (select (i32.const 0xFFFF)
                  (i32.sub (i32.shl (i32.const 1) (local.get $rest)) (i32.const 1))
                  (i32.ge_u (local.get $rest) (i32.const 16)))))))
        (local.set $in (i32.add (local.get $in) (i32.const 16)))
        (br $blocks)))
    (local.get $found))

  ;; gson(ptr, len, max, out) -> the length of the text written at out: the body at [ptr, ptr +
  ;; len) with Gson's escapes applied and Java's whitespace removed, as canonical.ts's
  ;; withGsonEscapes(body, true, max) makes it; -1 when nothing was escaped, -2 when more than
  ;; max escapes were (told at the block where it happens). Needs ptr >= 6544 and, at
  ;; out >= 6544, len + 5 * (max + 16) + 16 bytes that do not overlap the body: each escape writes
  ;; 6 bytes for one byte (or for U+2028's three), up to 16 escapes past max are written before
  ;; the last bytes' refusal, and a store runs up to 16 bytes past the text's end (a compressed
  ;; segment is stored as two 8-byte halves whatever it keeps). Reads stay within the body and
  ;; the caller's 16 spare bytes after it, and what is read past the body never reaches the text.
  ;;
  ;; 16 bytes at a time while 16 remain:
  ;; - a block without a byte to escape and without E2 is copied whole or compressed as `strip`
  ;;   does (the bulk of an ordinary body);
  ;; - any other block, while the two bytes after it are body too, is made from masks: its escapes
  ;;   (`< > & = '`, and U+2028/9 matched with the two bytes after each E2) and the bytes it drops
  ;;   (whitespace, and the last two bytes of each U+2028, which may spill into the next block as
  ;;   $carry); the kept bytes between escapes are compressed and stored a segment at a time, each
  ;;   escape's 8-byte entry after its segment. One compression per escape, and one more;
  ;; - the last 17 bytes or fewer, byte by byte without a branch on the byte (see there).
  ;; A branch per byte's kind, as the first version had, mispredicted on most bytes of a hostile
  ;; body that mixes kinds at random: 8x one HMAC of the body. This costs about 1.5x at worst.
  (func (export "gson") (param $ptr i32) (param $len i32) (param $max i32) (param $dst i32) (result i32)
    (local $in i32) (local $out i32) (local $end i32) (local $stop i32) (local $escapes i32)
    (local $w i32) (local $b i32) (local $ls i32) (local $adv i32) (local $skip i32)
    (local $e i32) (local $lsm i32) (local $cont i32) (local $drop i32) (local $carry i32)
    (local $seen i32) (local $p i32)
    (local $nibble v128) (local $low4 v128) (local $special v128) (local $ascii v128)
    (local $vE2 v128) (local $v80 v128) (local $v01 v128) (local $vA9 v128)
    (local $x v128) (local $n v128) (local $y v128) (local $m i32) (local $lo i32) (local $hi i32)
    (local.set $nibble (v128.load (i32.const 4096)))
    (local.set $low4 (v128.load (i32.const 4112)))
    (local.set $special (v128.load (i32.const 4128)))
    (local.set $ascii (v128.load (i32.const 6464)))
    (local.set $vE2 (v128.load (i32.const 6480)))
    (local.set $v80 (v128.load (i32.const 6496)))
    (local.set $v01 (v128.load (i32.const 6512)))
    (local.set $vA9 (v128.load (i32.const 6528)))
    (local.set $in (local.get $ptr))
    (local.set $out (local.get $dst))
    (local.set $end (i32.add (local.get $ptr) (local.get $len)))
    (block $done
      (loop $blocks
        (if (i32.le_u (i32.add (local.get $in) (i32.const 16)) (local.get $end))
          (then
            (local.set $x (v128.load (local.get $in)))
            (local.set $n (v128.and (local.get $x) (local.get $low4)))
            ;; CLASSIFY, as in `strip`, and the last bytes of a U+2028 begun in the block before.
            (local.set $m
              (i32.or (local.get $carry)
                (i8x16.bitmask (i8x16.eq (local.get $x) (i8x16.swizzle (local.get $nibble) (local.get $n))))))
            (if (i32.eqz (v128.any_true
                  (i8x16.eq (local.get $x) (i8x16.swizzle (local.get $special) (local.get $n)))))
              (then
                (local.set $carry (i32.const 0))
                (local.set $in (i32.add (local.get $in) (i32.const 16)))
                ;; COMPRESS, as in `strip` (with mask 0 it stores the block as it is)
                (local.set $lo (i32.and (local.get $m) (i32.const 0xFF)))
                (local.set $hi (i32.shr_u (local.get $m) (i32.const 8)))
                (local.set $y
                  (i8x16.swizzle (local.get $x)
                    (v128.load64_lane offset=2048 1 (i32.shl (local.get $hi) (i32.const 3))
                      (v128.load64_zero (i32.shl (local.get $lo) (i32.const 3))))))
                (v128.store64_lane 0 (local.get $out) (local.get $y))
                (local.set $out (i32.sub (i32.add (local.get $out) (i32.const 8)) (i32.popcnt (local.get $lo))))
                (v128.store64_lane 1 (local.get $out) (local.get $y))
                (local.set $out (i32.sub (i32.add (local.get $out) (i32.const 8)) (i32.popcnt (local.get $hi))))
                (br $blocks)))
            ;; A block with something to escape, where the two bytes after it are body too (a
            ;; U+2028 at its last lanes is matched on them): its escapes, and the lanes a U+2028
            ;; drops, as masks; then the kept bytes between escapes are compressed and stored a
            ;; segment at a time, each escape's 8-byte entry after its segment. One compression
            ;; per escape and one more, where going byte by byte cost a dozen instructions a byte.
            (if (i32.le_u (i32.add (local.get $in) (i32.const 18)) (local.get $end))
              (then
                (local.set $lsm
                  (i8x16.bitmask
                    (v128.and
                      (v128.and
                        (i8x16.eq (local.get $x) (local.get $vE2))
                        (i8x16.eq (v128.load offset=1 (local.get $in)) (local.get $v80)))
                      (i8x16.eq (v128.or (v128.load offset=2 (local.get $in)) (local.get $v01)) (local.get $vA9)))))
                (local.set $cont
                  (i32.or (i32.shl (local.get $lsm) (i32.const 1)) (i32.shl (local.get $lsm) (i32.const 2))))
                (local.set $drop (i32.and (i32.or (local.get $m) (local.get $cont)) (i32.const 0xFFFF)))
                (local.set $carry (i32.shr_u (local.get $cont) (i32.const 16)))
                (local.set $e
                  (i32.or (local.get $lsm)
                    (i8x16.bitmask (i8x16.eq (local.get $x) (i8x16.swizzle (local.get $ascii) (local.get $n))))))
                ;; Counted before anything is written: a refused block writes nothing.
                (local.set $escapes (i32.add (local.get $escapes) (i32.popcnt (local.get $e))))
                (if (i32.gt_u (local.get $escapes) (local.get $max)) (then (return (i32.const -2))))
                (local.set $seen (i32.const 0))
                (block $segments_done
                  (loop $segments
                    (br_if $segments_done (i32.eqz (local.get $e)))
                    (local.set $p (i32.ctz (local.get $e)))
                    ;; The segment: lanes after the last escape and before this one, less those dropped.
                    (local.set $m
                      (i32.and
                        (i32.or (i32.or (local.get $drop) (local.get $seen)) (i32.shl (i32.const -1) (local.get $p)))
                        (i32.const 0xFFFF)))
                    (local.set $lo (i32.and (local.get $m) (i32.const 0xFF)))
                    (local.set $hi (i32.shr_u (local.get $m) (i32.const 8)))
                    (local.set $y
                      (i8x16.swizzle (local.get $x)
                        (v128.load64_lane offset=2048 1 (i32.shl (local.get $hi) (i32.const 3))
                          (v128.load64_zero (i32.shl (local.get $lo) (i32.const 3))))))
                    (v128.store64_lane 0 (local.get $out) (local.get $y))
                    (local.set $out (i32.sub (i32.add (local.get $out) (i32.const 8)) (i32.popcnt (local.get $lo))))
                    (v128.store64_lane 1 (local.get $out) (local.get $y))
                    (local.set $out (i32.sub (i32.add (local.get $out) (i32.const 8)) (i32.popcnt (local.get $hi))))
                    ;; The escape: U+2028/9's entry (256 or 257, by its last byte) or the byte's.
                    (local.set $b (i32.add (local.get $in) (local.get $p)))
                    (i64.store (local.get $out)
                      (i64.load offset=4400
                        (i32.shl
                          (select
                            (i32.add (i32.const 256) (i32.and (i32.load8_u offset=2 (local.get $b)) (i32.const 1)))
                            (i32.load8_u (local.get $b))
                            (i32.and (i32.shr_u (local.get $lsm) (local.get $p)) (i32.const 1)))
                          (i32.const 3))))
                    (local.set $out (i32.add (local.get $out) (i32.const 6)))
                    ;; Lanes 0 to p are done.
                    (local.set $seen (i32.shr_u (i32.const -1) (i32.sub (i32.const 31) (local.get $p))))
                    (local.set $e (i32.and (local.get $e) (i32.sub (local.get $e) (i32.const 1))))
                    (br $segments)))
                ;; The lanes after the last escape.
                (local.set $m (i32.and (i32.or (local.get $drop) (local.get $seen)) (i32.const 0xFFFF)))
                (local.set $lo (i32.and (local.get $m) (i32.const 0xFF)))
                (local.set $hi (i32.shr_u (local.get $m) (i32.const 8)))
                (local.set $y
                  (i8x16.swizzle (local.get $x)
                    (v128.load64_lane offset=2048 1 (i32.shl (local.get $hi) (i32.const 3))
                      (v128.load64_zero (i32.shl (local.get $lo) (i32.const 3))))))
                (v128.store64_lane 0 (local.get $out) (local.get $y))
                (local.set $out (i32.sub (i32.add (local.get $out) (i32.const 8)) (i32.popcnt (local.get $lo))))
                (v128.store64_lane 1 (local.get $out) (local.get $y))
                (local.set $out (i32.sub (i32.add (local.get $out) (i32.const 8)) (i32.popcnt (local.get $hi))))
                (local.set $in (i32.add (local.get $in) (i32.const 16)))
                (br $blocks)))
            (local.set $stop (i32.add (local.get $in) (i32.const 16))))
          (else
            (br_if $done (i32.ge_u (local.get $in) (local.get $end)))
            (local.set $stop (local.get $end))))
        ;; The last 17 bytes or fewer, byte by byte up to $stop (or two past it, for a U+2028
        ;; that starts before it), without a branch on what a byte is: each byte stores its 8-byte
        ;; ENTRY (itself, or its escape) and advances by its ADV (1, 0 or 6), so the next store
        ;; overwrites what it does not keep. The bytes of a U+2028 begun in the block before
        ;; (carry: lanes 0, or 0 and 1) advance nothing.
        (local.set $skip (i32.popcnt (local.get $carry)))
        (local.set $carry (i32.const 0))
        (loop $bytes
          ;; The byte and the three after it, in one load: U+2028/9 is E2 80 A8/A9 within the
          ;; body. Past the body it reads the caller's spare bytes, which the bound test discards.
          (local.set $w (i32.load (local.get $in)))
          (local.set $b (i32.and (local.get $w) (i32.const 0xFF)))
          (local.set $ls
            (i32.and
              (i32.eq (i32.and (local.get $w) (i32.const 0xFEFFFF)) (i32.const 0xA880E2))
              (i32.le_u (i32.add (local.get $in) (i32.const 3)) (local.get $end))))
          (i64.store (local.get $out)
            (i64.load offset=4400
              (i32.shl
                (select
                  (i32.add (i32.const 256) (i32.and (i32.shr_u (local.get $w) (i32.const 16)) (i32.const 1)))
                  (local.get $b)
                  (local.get $ls))
                (i32.const 3))))
          ;; The two bytes after an E2 that began U+2028 advance nothing: $in moves by one
          ;; whatever the byte, so no load waits for the one before it.
          (local.set $adv
            (select (i32.const 0)
              (select (i32.const 6) (i32.load8_u offset=4144 (local.get $b)) (local.get $ls))
              (local.get $skip)))
          (local.set $skip
            (select (i32.const 2) (i32.sub (local.get $skip) (i32.ne (local.get $skip) (i32.const 0))) (local.get $ls)))
          (local.set $out (i32.add (local.get $out) (local.get $adv)))
          (local.set $escapes (i32.add (local.get $escapes) (i32.eq (local.get $adv) (i32.const 6))))
          (local.set $in (i32.add (local.get $in) (i32.const 1)))
          (br_if $bytes (i32.lt_u (local.get $in) (local.get $stop))))
        ;; A U+2028 begun at the last bytes: the next block starts after it, unaligned.
        (local.set $in (i32.add (local.get $in) (local.get $skip)))
        (local.set $skip (i32.const 0))
        ;; Counted per block rather than per escape: at most 16 escapes past max are written
        ;; before the refusal, which the caller's room allows for.
        (if (i32.gt_u (local.get $escapes) (local.get $max)) (then (return (i32.const -2))))
        (br $blocks)))
    (if (result i32) (local.get $escapes)
      (then (i32.sub (local.get $out) (local.get $dst)))
      (else (i32.const -1))))

  ;; unicode(ptr, len) -> the length of the text left at ptr: the body with every Unicode
  ;; whitespace character removed, as canonical.ts's stripUnicodeWhitespace makes it; -1 when it
  ;; holds none beyond Java's six (that text is the service's own form). Needs ptr >= 6544, two
  ;; spaces after the body (the caller writes them: a space ends nothing the bytes before it begin)
  ;; and 18 bytes of memory after ptr + len: every block is read with the two bytes after it, the
  ;; last, partial one whole.
  ;;
  ;; 16 bytes at a time, and no branch on what they hold: a body whose bytes mix kinds at random
  ;; mispredicted a pass that branched on each byte's kind, as it did `gson`'s first version. The
  ;; block is read three times, at each byte, one after and two after, so that each lane holds a
  ;; byte and the two after it; comparisons then tell in every lane at once whether a character
  ;; of the set begins there (canonical.ts's whitespaceTables, spelled out below; the test
  ;; holds the two to one another on every pair of bytes). A byte is removed when a character
  ;; begins at it, or one of two or more bytes began one back, or one of three two back: as
  ;; masks, the starts shifted by one and two, with what the block's last two lanes begin carried
  ;; into the next block. Judging each byte on its own is the same as reading character by
  ;; character, since no byte that may begin one (below 0x80, C2, E1, E2, E3, EF) ever continues
  ;; one (80-BF). The bytes kept are packed as `strip` packs them, in place: the output never
  ;; passes the block being read, and a block's three loads come before its stores.
  ;;
  ;; Lanes past the body (the last block's) count as removed and begin nothing beyond Java's six,
  ;; so whatever they hold (a previous call's body) never reaches the text or the answer.
  ;; The constants are loaded into locals before the loop, as `strip`'s are (V8 rebuilds a
  ;; v128.const at every use): a quarter less time than loading each where it is used.
  (func (export "unicode") (param $ptr i32) (param $len i32) (result i32)
    (local $in i32) (local $end i32) (local $out i32) (local $rest i32) (local $keep i32)
    (local $carry i32) (local $beyond i32) (local $starts i32) (local $three i32) (local $removed i32)
    (local $lo i32) (local $hi i32)
    (local $x0 v128) (local $x1 v128) (local $x2 v128) (local $e2 v128) (local $after80 v128)
    (local $third80 v128) (local $one v128) (local $two v128) (local $v3 v128) (local $y v128)
    (local $nibble v128) (local $low4 v128) (local $kE2 v128) (local $k80 v128) (local $kFC v128)
    (local $k1C v128) (local $kC2 v128) (local $k85 v128) (local $kA0 v128) (local $kE1 v128)
    (local $k9A v128) (local $k8B v128) (local $kFE v128) (local $kA8 v128) (local $kAF v128)
    (local $k81 v128) (local $k9F v128) (local $kE3 v128) (local $kEF v128) (local $kBB v128)
    (local $kBF v128)
    (local.set $nibble (v128.load (i32.const 4096)))
    (local.set $low4 (v128.load (i32.const 4112)))
    (local.set $kE2 (v128.load (i32.const 6480)))
    (local.set $k80 (v128.load (i32.const 6496)))
    (local.set $kFC (v128.load (i32.const 6544)))
    (local.set $k1C (v128.load (i32.const 6560)))
    (local.set $kC2 (v128.load (i32.const 6576)))
    (local.set $k85 (v128.load (i32.const 6592)))
    (local.set $kA0 (v128.load (i32.const 6608)))
    (local.set $kE1 (v128.load (i32.const 6624)))
    (local.set $k9A (v128.load (i32.const 6640)))
    (local.set $k8B (v128.load (i32.const 6656)))
    (local.set $kFE (v128.load (i32.const 6672)))
    (local.set $kA8 (v128.load (i32.const 6688)))
    (local.set $kAF (v128.load (i32.const 6704)))
    (local.set $k81 (v128.load (i32.const 6720)))
    (local.set $k9F (v128.load (i32.const 6736)))
    (local.set $kE3 (v128.load (i32.const 6752)))
    (local.set $kEF (v128.load (i32.const 6768)))
    (local.set $kBB (v128.load (i32.const 6784)))
    (local.set $kBF (v128.load (i32.const 6800)))
    (local.set $in (local.get $ptr))
    (local.set $out (local.get $ptr))
    (local.set $end (i32.add (local.get $ptr) (local.get $len)))
    (block $done
      (loop $blocks
        (br_if $done (i32.ge_u (local.get $in) (local.get $end)))
        (local.set $rest (i32.sub (local.get $end) (local.get $in)))
        ;; The lanes that are body: all 16, or the first $rest of the last block.
        (local.set $keep
          (select (i32.const 0xFFFF)
            (i32.sub (i32.shl (i32.const 1) (local.get $rest)) (i32.const 1))
            (i32.ge_u (local.get $rest) (i32.const 16))))
        (local.set $x0 (v128.load (local.get $in)))
        (local.set $x1 (v128.load offset=1 (local.get $in)))
        (local.set $x2 (v128.load offset=2 (local.get $in)))
        (local.set $e2 (i8x16.eq (local.get $x0) (local.get $kE2)))
        (local.set $after80 (i8x16.eq (local.get $x1) (local.get $k80)))
        (local.set $third80 (i8x16.eq (local.get $x2) (local.get $k80)))
        ;; U+001C-U+001F: 1C to 1F.
        (local.set $one
          (i8x16.eq (v128.and (local.get $x0) (local.get $kFC)) (local.get $k1C)))
        ;; U+0085, U+00A0: C2 85, C2 A0.
        (local.set $two
          (v128.and (i8x16.eq (local.get $x0) (local.get $kC2))
            (v128.or (i8x16.eq (local.get $x1) (local.get $k85))
              (i8x16.eq (local.get $x1) (local.get $kA0)))))
        (local.set $v3
          (v128.or
            (v128.or
              ;; U+1680: E1 9A 80.
              (v128.and (v128.and (i8x16.eq (local.get $x0) (local.get $kE1))
                (i8x16.eq (local.get $x1) (local.get $k9A))) (local.get $third80))
              ;; U+3000: E3 80 80.
              (v128.and (v128.and (i8x16.eq (local.get $x0) (local.get $kE3))
                (local.get $after80)) (local.get $third80)))
            (v128.or
              ;; U+FEFF: EF BB BF.
              (v128.and (v128.and (i8x16.eq (local.get $x0) (local.get $kEF))
                (i8x16.eq (local.get $x1) (local.get $kBB)))
                (i8x16.eq (local.get $x2) (local.get $kBF)))
              (v128.and (local.get $e2)
                (v128.or
                  ;; U+2000-U+200A, U+2028, U+2029, U+202F: E2 80 and 80-8A (below 8B as signed
                  ;; bytes, from 80 the least), A8 or A9 (A8 once bit 0 is cleared), or AF.
                  (v128.and (local.get $after80)
                    (v128.or (i8x16.lt_s (local.get $x2) (local.get $k8B))
                      (v128.or
                        (i8x16.eq (v128.and (local.get $x2) (local.get $kFE)) (local.get $kA8))
                        (i8x16.eq (local.get $x2) (local.get $kAF)))))
                  ;; U+205F: E2 81 9F.
                  (v128.and (i8x16.eq (local.get $x1) (local.get $k81))
                    (i8x16.eq (local.get $x2) (local.get $k9F))))))))
        (local.set $beyond
          (i32.or (local.get $beyond)
            (i32.and (local.get $keep)
              (i8x16.bitmask (v128.or (local.get $one) (v128.or (local.get $two) (local.get $v3)))))))
        ;; Starts of two or more bytes, and of three: each removes the byte it begins at and the
        ;; one after; a three-byte one the one after that too. Bits 16 and 17 go to the next block.
        (local.set $three (i8x16.bitmask (local.get $v3)))
        (local.set $starts (i32.or (i8x16.bitmask (local.get $two)) (local.get $three)))
        (local.set $removed
          (i32.or
            (i32.or
              ;; Java's six (as `strip` tells them), and U+001C-U+001F.
              (i8x16.bitmask
                (v128.or (local.get $one)
                  (i8x16.eq (local.get $x0)
                    (i8x16.swizzle (local.get $nibble) (v128.and (local.get $x0) (local.get $low4))))))
              (local.get $carry))
            (i32.or (i32.or (local.get $starts) (i32.shl (local.get $starts) (i32.const 1)))
              (i32.shl (local.get $three) (i32.const 2)))))
        (local.set $carry (i32.shr_u (local.get $removed) (i32.const 16)))
        (local.set $removed
          (i32.or (i32.and (local.get $removed) (local.get $keep)) (i32.xor (local.get $keep) (i32.const 0xFFFF))))
        ;; COMPRESS, as in `strip`.
        (local.set $lo (i32.and (local.get $removed) (i32.const 0xFF)))
        (local.set $hi (i32.shr_u (local.get $removed) (i32.const 8)))
        (local.set $y
          (i8x16.swizzle (local.get $x0)
            (v128.load64_lane offset=2048 1 (i32.shl (local.get $hi) (i32.const 3))
              (v128.load64_zero (i32.shl (local.get $lo) (i32.const 3))))))
        (v128.store64_lane 0 (local.get $out) (local.get $y))
        (local.set $out (i32.sub (i32.add (local.get $out) (i32.const 8)) (i32.popcnt (local.get $lo))))
        (v128.store64_lane 1 (local.get $out) (local.get $y))
        (local.set $out (i32.sub (i32.add (local.get $out) (i32.const 8)) (i32.popcnt (local.get $hi))))
        (local.set $in (i32.add (local.get $in) (i32.const 16)))
        (br $blocks)))
    (if (result i32) (local.get $beyond)
      (then (i32.sub (local.get $out) (local.get $ptr)))
      (else (i32.const -1))))
)
