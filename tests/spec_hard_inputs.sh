#!/usr/bin/env bash
# Hard .spec inputs (issue 60, found by a SQL-aware fuzzer): each is bad input for `check` and
# `isolation` alike, exit 2 with a message that names the file and the place, within seconds:
# never a crash, an internal error (exit 3) or a hang.
# Usage: spec_hard_inputs.sh LOCKSTEP_BINARY
set -uo pipefail
lockstep="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect_bad NAME WANT COMMANDS...: each command (check, isolation) exits 2 within 20 s and
# prints WANT (a fixed string).
expect_bad() {
  local name="$1" want="$2"
  shift 2
  for cmd in "$@"; do
    out=$(timeout 20 "$lockstep" "$cmd" "$work/$name.spec" 2>&1); code=$?
    if [ $code -eq 2 ] && grep -qF -- "$want" <<<"$out"; then
      echo "ok: $cmd $name: exit 2: $(head -c 200 <<<"$out")"
    else
      fail "$cmd $name (exit $code, wanted 2 and \"$want\"): $(head -c 400 <<<"$out")"
    fi
  done
}

nested="1"; for _ in $(seq 224); do nested="(SELECT $nested)"; done
printf 'session a\nstep x { SELECT %s; }\n' "$nested" > "$work/nested.spec"
expect_bad nested "nested.spec:2:521: nesting deeper than 128 levels" check isolation

sum="1"; for _ in $(seq 531); do sum="$sum + 1"; done
printf 'session a\nstep x { SELECT %s; }\n' "$sum" > "$work/sum.spec"
expect_bad sum "sum.spec:2:" check isolation

coalesce="1"; for _ in $(seq 624); do coalesce="coalesce($coalesce)"; done
printf 'session a\nstep x { SELECT %s; }\n' "$coalesce" > "$work/coalesce.spec"
expect_bad coalesce "nesting deeper than 128 levels" check isolation

# The other shapes the fuzzer found crashing at these depths: abs( 532, NOT 569, CASE 580.
abs="1"; for _ in $(seq 532); do abs="abs($abs)"; done
printf 'session a\nstep x { SELECT %s; }\n' "$abs" > "$work/abs.spec"
expect_bad abs "nesting deeper than 128 levels" check isolation
not="true"; for _ in $(seq 569); do not="NOT $not"; done
printf 'session a\nstep x { SELECT %s; }\n' "$not" > "$work/not.spec"
expect_bad not "nesting deeper than 128 levels" check isolation
case="1"; for _ in $(seq 580); do case="CASE WHEN true THEN $case END"; done
printf 'session a\nstep x { SELECT %s; }\n' "$case" > "$work/case.spec"
expect_bad case "nesting deeper than 128 levels" check isolation

printf 'setup { SELECT \x27\xff\x27; }\nsession a\nstep x { SELECT 1; }\n' > "$work/utf8.spec"
expect_bad utf8 "utf8.spec:1:17: invalid UTF-8 (byte 0xFF)" check isolation

printf 'session x\nstep x1 { SELECT 1; }\nstep x2 { SELECT 2; }\npermutation x1(x2 notices 1) x2\n' > "$work/own-blocker.spec"
expect_bad own-blocker "own-blocker.spec:4:16: permutation step \"x1\" cannot block on its own session's step \"x2\"" check isolation

printf 'session a\nstep x { SELECT 1; }\ncheck c { SELECT true }\nexpect violation "X"\n' > "$work/expect-unknown.spec"
expect_bad expect-unknown "expect-unknown.spec:4:1: expect violation \"X\": no check has that name" check isolation

printf 'session a\nstep x { SELECT 1; }\nfault disk_full\n' > "$work/fault-unknown.spec"
expect_bad fault-unknown "fault-unknown.spec:3: fault \"disk_full\"" check

{ for i in $(seq 0 69); do printf 'session s%d\nstep x%d { SELECT 1; }\n' "$i" "$i"; done; } > "$work/many.spec"
expect_bad many "many.spec:127:1: 70 sessions; at most 63" check isolation

{ for s in a b c; do printf 'session %s\n' "$s"; for i in $(seq 9); do printf 'step %s%d { SELECT %d; }\n' "$s" "$i" "$i"; done; done; } > "$work/interleavings.spec"
expect_bad interleavings "interleave in 227873431500 ways" isolation

# Found by the fuzzer (a hang that ignored SIGTERM): a step held back by a notices blocker
# whose notices never come, when its session's next step is due. isolationtester gives up
# after twice max_step_wait; so does the simulation, in virtual time, at once.
printf 'session a\nstep a1 { SELECT 1; }\nstep a2 { SELECT 2; }\nsession b\nstep b1 { SELECT 3; }\npermutation a1(b1 notices 1) a2 b1\n' > "$work/held.spec"
expect_bad held "held.spec: permutation step a2 (position 2): step a1 timed out after 600 seconds" isolation

[ $failures -eq 0 ] || exit 1
