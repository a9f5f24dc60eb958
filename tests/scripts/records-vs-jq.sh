#!/usr/bin/env bash
# Whole-process time of `tether sessions list` and `tether sessions import`
# beside `jq -c` pulling the same fields (session, time, tool_use/tool_result
# name, id, error, added tool names) from the same Claude Code transcripts:
# paired and interleaved (the order alternates each round), the median of
# ROUNDS rounds, with each arm's peak RSS. The figures go in
# docs/PERFORMANCE.md ("Session records").
#
# usage: tests/scripts/records-vs-jq.sh [CORPUS_DIR [MB [ROUNDS]]]
#   TETHER   the binary (default: target/release/tether; build it with
#            `cargo build --release -p tether-mcp-cli`)
#   CORPUS_DIR a private home holding .claude/projects/… (written by
#            `tether-records-corpus` when it holds none; default:
#            ${TMPDIR:-/tmp}/tether-records-corpus)
#   MB       the corpus's size when written (default 250)
#   ROUNDS   default 7
set -euo pipefail

cd "$(dirname "$0")/../.."
corpus=${1:-${TMPDIR:-/tmp}/tether-records-corpus}
mb=${2:-250}
rounds=${3:-7}
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
    echo "records-vs-jq: writing a ${mb} MB corpus in $corpus"
    CARGO_INCREMENTAL=0 cargo run -q -p tether-tests --bin tether-records-corpus -- "$corpus" "$mb"
fi

mapfile -t files < <(find "$corpus/.claude/projects" -name '*.jsonl' | sort)
bytes=$(cat "${files[@]}" | wc -c)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
filter='[.sessionId, .timestamp, (.message.content? | arrays | .[] | select(.type == "tool_use" or .type == "tool_result") | [.name, .id, .tool_use_id, .is_error]), (.attachment.addedNames?)] | select(length > 2)'

# A clean environment: the corpus is the home, nothing moves a harness's
# folder, and the store is a scratch file.
run_env=(env -i "HOME=$corpus" "PATH=/usr/bin:/bin" "TETHER_DB=$scratch/store.db")

# One timed run: "WALL_SECONDS PEAK_KIB CPU_SECONDS" on stdout.
timed() {
    /usr/bin/time -f '%e %M %U %S' -o "$scratch/time" "$@" >/dev/null 2>"$scratch/err" || {
        echo "records-vs-jq: failed: $*" >&2
        cat "$scratch/err" >&2
        exit 1
    }
    awk '{printf "%s %s %.2f\n", $1, $2, $3 + $4}' "$scratch/time"
}

arm_list() { timed "${run_env[@]}" "$tether" sessions list; }
arm_import() {
    rm -f "$scratch"/store.db*
    timed "${run_env[@]}" "$tether" sessions import
}
arm_jq() { timed jq -c "$filter" "${files[@]}"; }

# Warm the page cache and check each arm runs.
arm_list >/dev/null
arm_jq >/dev/null
arm_import >/dev/null

load=$(cut -d' ' -f1-3 /proc/loadavg)
declare -A times peaks cpus
arms=(list import jq)
for ((r = 0; r < rounds; r++)); do
    if ((r % 2)); then order=(jq import list); else order=(list import jq); fi
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
echo "load average before the rounds: $load, $(nproc) cores; median of each arm"
jq_t=$(echo "${times[jq]}" | median)
jq_c=$(echo "${cpus[jq]}" | median)
for arm in "${arms[@]}"; do
    t=$(echo "${times[$arm]}" | median)
    c=$(echo "${cpus[$arm]}" | median)
    awk -v a="$arm" -v t="$t" -v c="$c" -v b="$bytes" -v j="$jq_t" -v jc="$jq_c" -v m="${peaks[$arm]}" -v all="${times[$arm]}" \
        'BEGIN {printf "%-7s wall %6.3f s %5.0f MB/s %5.3fx jq (%4.1fx faster) | cpu %5.2f s %5.3fx jq | peak RSS %3.0f MiB | walls [%s]\n", a, t, b / 1e6 / t, t / j, j / t, c, c / jc, m / 1024, all}'
done
