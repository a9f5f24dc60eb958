#!/usr/bin/env bash
# Whole-process time of `tether sessions list` and `tether sessions import`
# beside `jq -c` pulling the same fields (session, time, tool_use/tool_result
# name, id, error, added tool names) from the same Claude Code transcripts:
# paired and interleaved (the order alternates each round), the median of
# ROUNDS rounds, with each arm's peak RSS. The figures go in
# docs/PERFORMANCE.md ("Session records").
#
# The arms: `list` and `import` the first time (no store: every file read);
# `list2` and `import2` again over the unchanged files (the store's ledger
# says how far each was read: nothing is); `grown` an import after one
# session file grew by 1 MB (its own records again, with new call ids),
# the store as the first import left it; `jq`.
#
# usage: tests/scripts/records-vs-jq.sh [CORPUS_DIR [MB [ROUNDS [SHAPE]]]]
#   TETHER   the binary (default: target/release/tether; build it with
#            `cargo build --release -p tether-mcp-cli`)
#   CORPUS_DIR a private home holding .claude/projects/… (written by
#            `tether-records-corpus` when it holds none; default:
#            ${TMPDIR:-/tmp}/tether-records-corpus)
#   MB       the corpus's size when written (default 250)
#   ROUNDS   default 7
#   SHAPE    the corpus written: `sessions` (default: 0.25 to 8 MiB sessions
#            of one release) or `home` (a heavy user's home: many small
#            sessions, sub-agents, several projects and releases); a folder
#            of real transcripts is written with `tether-records-corpus HOME
#            MB --from DIR` and given as CORPUS_DIR
set -euo pipefail

cd "$(dirname "$0")/../.."
corpus=${1:-${TMPDIR:-/tmp}/tether-records-corpus}
mb=${2:-250}
rounds=${3:-7}
shape=${4:-sessions}
tether=${TETHER:-target/release/tether}

if ! command -v jq >/dev/null 2>&1; then
    echo "records-vs-jq: jq is not installed here; skipped (Debian: apt-get install jq)"
    exit 0
fi
if [ ! -x "$tether" ]; then
    echo "records-vs-jq: no $tether; build it: cargo build --release -p tether-mcp-cli" >&2
    exit 2
fi
if [ ! -d "$corpus/.claude/projects" ]; then
    echo "records-vs-jq: writing a ${mb} MB corpus ($shape) in $corpus"
    CARGO_INCREMENTAL=0 cargo run -q -p tether-tests --bin tether-records-corpus -- "$corpus" "$mb" "$shape"
fi

mapfile -t files < <(find "$corpus/.claude/projects" -name '*.jsonl' | sort)
bytes=$(cat "${files[@]}" | wc -c)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
filter='[.sessionId, .timestamp, (.message.content? | arrays | .[] | select(.type == "tool_use" or .type == "tool_result") | [.name, .id, .tool_use_id, .is_error]), (.attachment.addedNames?)] | select(length > 2)'

# A clean environment: the corpus is the home, nothing moves a harness's
# folder, and each arm's store is a scratch file of its own, so one arm's
# ledger is not another's.

# One timed run: "WALL_SECONDS PEAK_KIB CPU_SECONDS" on stdout.
timed() {
    /usr/bin/time -f '%e %M %U %S' -o "$scratch/time" "$@" >/dev/null 2>"$scratch/err" || {
        echo "records-vs-jq: failed: $*" >&2
        cat "$scratch/err" >&2
        exit 1
    }
    awk '{printf "%s %s %.2f\n", $1, $2, $3 + $4}' "$scratch/time"
}

in_store() { env -i "HOME=$corpus" "PATH=/usr/bin:/bin" "TETHER_DB=$scratch/$1.db" "${@:2}"; }
timed_in() { timed env -i "HOME=$corpus" "PATH=/usr/bin:/bin" "TETHER_DB=$scratch/$1.db" "${@:2}"; }
fresh() { rm -f "$scratch/$1".db*; }

# The file that grows: the largest session, and 1 MB of its own records
# with new call ids appended (undone after each run).
grow=$(ls -S "${files[@]}" | head -1 || true)
grow_len=$(stat -c %s "$grow")
touch -r "$grow" "$scratch/grow.mtime"
{ tail -c 1100000 "$grow" | tail -n +2 | head -c 1000000 | sed '$d' | sed 's/toolu_/toolv_/g' >"$scratch/more.jsonl"; } || true

arm_list() {
    fresh list
    timed_in list "$tether" sessions list
}
arm_import() {
    fresh import
    timed_in import "$tether" sessions import
}
arm_list2() { timed_in list2 "$tether" sessions list; }
arm_import2() { timed_in import2 "$tether" sessions import; }
arm_grown() {
    cp "$scratch/base.db" "$scratch/grown.db"
    rm -f "$scratch"/grown.db-*
    cat "$scratch/more.jsonl" >>"$grow"
    timed_in grown "$tether" sessions import
    truncate -s "$grow_len" "$grow"
    # As it was, time too: the other arms' ledgers see it unchanged.
    touch -r "$scratch/grow.mtime" "$grow"
}
arm_jq() { timed jq -c "$filter" "${files[@]}"; }

# Warm the page cache, check each arm runs, and leave the second-run arms'
# stores as a first run leaves them.
arm_jq >/dev/null
in_store list2 "$tether" sessions list >/dev/null
in_store import2 "$tether" sessions import >/dev/null 2>&1
fresh base
in_store base "$tether" sessions import >/dev/null 2>&1
in_store base "$tether" sessions list >/dev/null
arm_list >/dev/null
arm_import >/dev/null
arm_grown >/dev/null

load=$(cut -d' ' -f1-3 /proc/loadavg)
declare -A times peaks cpus
arms=(list import list2 import2 grown jq)
for ((r = 0; r < rounds; r++)); do
    if ((r % 2)); then order=(jq grown import2 list2 import list); else order=("${arms[@]}"); fi
    for arm in "${order[@]}"; do
        read -r t m c < <("arm_$arm")
        times[$arm]+="$t "
        cpus[$arm]+="$c "
        peaks[$arm]=$m
    done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
mbytes=$(awk -v b="$bytes" 'BEGIN {printf "%.0f", b / 1e6}')
echo "corpus: ${#files[@]} files, $mbytes MB ($corpus); $rounds rounds, interleaved"
echo "load average before the rounds: $load, $(nproc) cores, after: $(cut -d' ' -f1-3 /proc/loadavg); median of each arm"
echo "second runs: list2 and import2 over the unchanged files; grown: after $(basename "$grow") grew by $(stat -c %s "$scratch/more.jsonl") bytes"
jq_t=$(echo "${times[jq]}" | median)
jq_c=$(echo "${cpus[jq]}" | median)
for arm in "${arms[@]}"; do
    t=$(echo "${times[$arm]}" | median)
    c=$(echo "${cpus[$arm]}" | median)
    awk -v a="$arm" -v t="$t" -v c="$c" -v b="$bytes" -v j="$jq_t" -v jc="$jq_c" -v m="${peaks[$arm]}" -v all="${times[$arm]}" \
        'BEGIN {printf "%-8s wall %6.3f s %5.0f MB/s %5.3fx jq (%4.1fx faster) | cpu %5.2f s %5.3fx jq | peak RSS %3.0f MiB | walls [%s]\n", a, t, b / 1e6 / t, t / j, j / t, c, c / jc, m / 1024, all}'
done
