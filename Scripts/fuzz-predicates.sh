#!/bin/sh
# Coverage-guided fuzzing of GraphStore's predicate parser with libFuzzer (Linux; Swift's -sanitize=fuzzer).
#
#   Scripts/fuzz-predicates.sh                 # runs until a finding or Ctrl-C
#   Scripts/fuzz-predicates.sh -max_total_time=300 -jobs=2
#   Scripts/fuzz-predicates.sh crash-<hash>    # replays one input
#
# The fuzzer is its own package (Scripts/fuzz-predicates), built with the main package's GraphStore in its own
# scratch folder; the corpus it starts from is written from formats the tests use. Findings land in the working
# folder (crash-*, timeout-*), as libFuzzer names them. Arguments are passed on to libFuzzer.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
package="$root/Scripts/fuzz-predicates"
scratch="${FUZZ_SCRATCH:-${TMPDIR:-/tmp}/faultline-fuzz-predicates}"
corpus="${FUZZ_CORPUS:-$scratch/corpus}"

# Every module instrumented, so that libFuzzer sees the coverage of the parser, not only of the entry point.
swift build --package-path "$package" --scratch-path "$scratch/build" -c release -Xswiftc -sanitize=fuzzer,address >&2
fuzzer="$scratch/build/release/PredicateFuzzer"
# Leak detection is off: swift-corelibs-foundation's NSRegularExpression leaks a few hundred bytes each time it
# refuses a pattern (MATCHES with an invalid regular expression), which is not ours to fix.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"
# Replaying findings: libFuzzer runs the files it is given, and nothing else.
if [ $# -gt 0 ] && [ -f "$1" ]; then exec "$fuzzer" "$@"; fi
mkdir -p "$corpus"
i=0
for format in \
    "name == 'ann'" "age >= 30 AND isBlocked == NO" "name BEGINSWITH[cd] 'a' OR (kind == 1 AND NOT members.@count > 2)" \
    "ANY members.name == 'bob'" "ALL chats.kind == 1" "NONE messages.score > 2" \
    "SUBQUERY(members, \$u, \$u.age > 26 AND \$u.isBlocked == NO).@count >= 1" "name IN {'bob', nil}" "age BETWEEN {1, 5}" \
    "%K == %@" "sender == \$SENDER" "TRUEPREDICATE" "text == \"say \\\"hi\\\"\\n\"" "a == -12 OR b == 2.5 OR c == 1e3" \
    "#size == 1" "SELF == %@" "name LIKE '?o*'" "name MATCHES '[a-z]{3}'" "!(a == 1) && ! b == 2 || c != 3"
do
    printf '%s' "$format" > "$corpus/seed-$i"
    i=$((i + 1))
done
exec "$fuzzer" -timeout=5 -max_len=4096 "$corpus" "$@"
