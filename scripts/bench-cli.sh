#!/usr/bin/env bash
# The `sift filter` benchmark (issue 14): whole-process time of the release `sift` against jq
# selecting the same records, on generated files of 100,000 records (one JSON array, and NDJSON),
# for --count, --indices and printing the matches; every run's match count is checked against
# jq's. Then `sift store import` and `sift store query` on the NDJSON file, as ratios against
# `sift filter` printing the same rows (query output checked to be filter's bytes; their runs taken
# in turn, so that the machine's changes of speed weigh on both). Then a ~2 GB
# NDJSON file (generated in a temporary folder, deleted afterwards) is filtered to report the peak
# resident size, from a file and from a pipe, and imported into a store for the import's. Speeds are ratios measured in this
# run on the same files, so they do not depend on the machine. Installs jq and GNU time when
# missing. RECORDS (default 100000), BIG_MB (default 2048) and ROUNDS (default 5, best kept) tune it;
# SIFT=path uses that release binary instead of building one; SIFT_BEFORE=path (another release
# binary, an earlier commit's) times its `sift store` runs too, each reported as a ratio to this one's.
set -euo pipefail
cd "$(dirname "$0")/.."

RECORDS=${RECORDS:-100000}
BIG_MB=${BIG_MB:-2048}
ROUNDS=${ROUNDS:-5}

need=()
command -v jq >/dev/null || need+=(jq)
[ -x /usr/bin/time ] || need+=(time)
if [ ${#need[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ]; then apt-get install -y "${need[@]}" >/dev/null; else sudo apt-get install -y "${need[@]}" >/dev/null; fi
fi

# SIFT names an already built release binary (one built with another --scratch-path), else it is built.
if [ -z "${SIFT:-}" ]; then
    swift build -c release --product sift >/dev/null
    SIFT=$(swift build -c release --show-bin-path)/sift
fi

DIR=$(mktemp -d "${TMPDIR:-/tmp}/sift-bench-cli.XXXXXX")
trap 'rm -rf "$DIR"' EXIT

# Records with nested objects and arrays; no integral doubles, so jq's compact output and sift's
# are the same bytes whatever jq's version.
awk -v n="$RECORDS" 'BEGIN {
    srand(14)
    split("Oslo,Paris,Lima,Osaka,Quito,Accra,Perth,Omaha,Turin,Kyiv", cities, ",")
    split("red,green,blue,amber,teal,plum", tags, ",")
    for (i = 0; i < n; i++) {
        nk = int(rand() * 3)
        kids = ""
        for (k = 0; k < nk; k++) kids = kids (k ? "," : "") sprintf("{\"name\":\"kid%d\",\"age\":%d}", k, int(rand() * 18))
        printf "{\"id\":%d,\"name\":\"user %d\",\"age\":%d,\"active\":%s,\"score\":%d.%d5,", i, i, int(rand() * 90), (rand() < 0.5 ? "true" : "false"), int(rand() * 100), int(rand() * 10)
        printf "\"address\":{\"city\":\"%s\",\"zip\":\"%05d\"},\"tags\":[\"%s\",\"%s\"],\"kids\":[%s]}\n", cities[1 + int(rand() * 10)], int(rand() * 99999), tags[1 + int(rand() * 6)], tags[1 + int(rand() * 6)], kids
    }
}' > "$DIR/records.ndjson"
{ echo "["; sed '$!s/$/,/' "$DIR/records.ndjson"; echo "]"; } > "$DIR/records.json"

PREDICATE='age >= 18 AND address.city BEGINSWITH "O" AND ANY kids.age < 10'
JQ_SELECT='select(.age >= 18 and (.address.city | startswith("O")) and any(.kids[]; .age < 10))'

# Best wall-clock seconds of $ROUNDS runs of "$@" (output discarded), then, after a space, the best
# CPU seconds (user + system) of those runs: on a machine shared with other work the CPU time is
# the steadier measure, so both ratios are printed.
best() {
    local best=999999999999 cpu=999999 t c
    for _ in $(seq "$ROUNDS"); do
        read -r t c <<< "$(once "$@")"
        [ "$t" -lt "$best" ] && best=$t
        [ "$c" -lt "$cpu" ] && cpu=$c
    done
    awk -v us="$best" -v ms="$cpu" 'BEGIN { printf "%.4f %.3f", us / 1e6, ms / 1e3 }'
}
# One run of "$@": its wall-clock microseconds and CPU milliseconds. bash's own `time` reads the
# child's user and system time to the millisecond (GNU time prints hundredths, a fifth of a 50 ms run).
once() {
    local TIMEFORMAT='%3U %3S' t0 t1
    t0=$(date +%s%N); { time "$@" >/dev/null 2>&3; } 3>&2 2>"$DIR/cpu"; t1=$(date +%s%N)
    echo "$(( (t1 - t0) / 1000 )) $(awk '{ printf "%d", ($1 + $2) * 1000 }' "$DIR/cpu")"
}
# `best` of `sift filter P FILE`, `sift store query DB Record P` and (with SIFT_BEFORE) the older
# binary's query, their runs taken in turn round after round, so that a change in the machine's
# speed during the run weighs on all of them alike: "filter-wall filter-cpu query-wall query-cpu
# before-wall before-cpu" (seconds).
best_in_turn() {
    local -a w=(999999999999 999999999999 999999999999) c=(999999 999999 999999)
    local t u k
    for _ in $(seq "$ROUNDS"); do
        for k in 0 1 2; do
            case $k in
                0) read -r t u <<< "$(once "$SIFT" filter "$3" "$1")" ;;
                1) read -r t u <<< "$(once "$SIFT" store query "$2" Record "$3")" ;;
                2) [ -n "${SIFT_BEFORE:-}" ] || continue
                   read -r t u <<< "$(once "$SIFT_BEFORE" store query "$2" Record "$3")" ;;
            esac
            [ "$t" -lt "${w[$k]}" ] && w[$k]=$t
            [ "$u" -lt "${c[$k]}" ] && c[$k]=$u
        done
    done
    awk -v a="${w[*]}" -v b="${c[*]}" 'BEGIN { split(a, w, " "); split(b, c, " ")
        for (k = 1; k <= 3; k++) printf "%.4f %.3f ", w[k] / 1e6, c[k] / 1e3 }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b > 0 ? a / b : 0) }'; }
mb() { awk -v bytes="$(stat -c %s "$1")" 'BEGIN { printf "%.1f", bytes / 1e6 }'; }

fail=0
echo "sift filter vs jq, $RECORDS records, predicate: $PREDICATE"
for kind in json ndjson; do
    file="$DIR/records.$kind"
    if [ "$kind" = json ]; then jqprog=".[] | $JQ_SELECT"; else jqprog="$JQ_SELECT"; fi
    jq -c "$jqprog" "$file" > "$DIR/jq.out"
    expected=$(wc -l < "$DIR/jq.out")
    "$SIFT" filter "$PREDICATE" "$file" > "$DIR/sift.out"
    got_count=$("$SIFT" filter --count "$PREDICATE" "$file")
    got_indices=$("$SIFT" filter --indices "$PREDICATE" "$file" | wc -l)
    got_print=$(wc -l < "$DIR/sift.out")
    same=$(cmp -s "$DIR/jq.out" "$DIR/sift.out" && echo "same bytes as jq" || echo "OUTPUT DIFFERS from jq")
    if [ "$got_count" != "$expected" ] || [ "$got_indices" != "$expected" ] || [ "$got_print" != "$expected" ]; then
        echo "MISMATCH on $kind: jq $expected, sift --count $got_count, --indices $got_indices, printed $got_print"; fail=1
    fi
    read -r t_jq c_jq <<< "$(best jq -c "$jqprog" "$file")"
    read -r t_count c_count <<< "$(best "$SIFT" filter --count "$PREDICATE" "$file")"
    read -r t_indices c_indices <<< "$(best "$SIFT" filter --indices "$PREDICATE" "$file")"
    read -r t_print c_print <<< "$(best "$SIFT" filter "$PREDICATE" "$file")"
    read_ms=$("$SIFT" filter --count --stats "$PREDICATE" "$file" 2>&1 >/dev/null | sed -n 's/.*read \([0-9.]*\) ms.*/\1/p')
    echo "$kind ($(mb "$file") MB, $expected matches, $same):"
    echo "  jq -c select   ${t_jq} s wall, ${c_jq} s CPU"
    echo "  sift --count   ${t_count} s wall, ${c_count} s CPU: $(ratio "$t_jq" "$t_count")x faster than jq (wall), $(ratio "$c_jq" "$c_count")x (CPU)"
    echo "  sift --indices ${t_indices} s wall, ${c_indices} s CPU: $(ratio "$t_jq" "$t_indices")x faster than jq (wall), $(ratio "$c_jq" "$c_indices")x (CPU)"
    echo "  sift (print)   ${t_print} s wall, ${c_print} s CPU: $(ratio "$t_jq" "$t_print")x faster than jq (wall), $(ratio "$c_jq" "$c_print")x (CPU)"
    echo "  reading (--stats): ${read_ms} ms, $(awk -v b="$(stat -c %s "$file")" -v ms="$read_ms" 'BEGIN { printf "%.0f", b / 1e3 / ms }') MB/s"
done

# `sift store` on the same NDJSON file, as ratios against `sift filter` printing the same rows in
# this run: an import into a new store (a copy of an empty one made with the inferred model, so
# every round starts empty), and a query printing every row and the predicate's rows; the query's
# output is checked to be the bytes filter prints.
ndjson="$DIR/records.ndjson"
"$SIFT" store infer-model "$ndjson" > "$DIR/model.json" 2>/dev/null
"$SIFT" store create "$DIR/empty.sqlite" --model "$DIR/model.json"
# One import round, as a command of its own for `best`: a fresh copy of the empty store, then import.
cat > "$DIR/import.sh" <<'SH'
#!/usr/bin/env bash
cp "$1" "$2" && exec "$3" store import "$2" Record "$4"
SH
chmod +x "$DIR/import.sh"
imported=$("$DIR/import.sh" "$DIR/empty.sqlite" "$DIR/store.sqlite" "$SIFT" "$ndjson")
[ "$imported" = "$RECORDS" ] || { echo "MISMATCH on store import: $imported records of $RECORDS"; fail=1; }
echo "sift store ($RECORDS records):"
read -r t_all c_all <<< "$(best "$SIFT" filter TRUEPREDICATE "$ndjson")"
read -r t_import c_import <<< "$(best "$DIR/import.sh" "$DIR/empty.sqlite" "$DIR/round.sqlite" "$SIFT" "$ndjson")"
echo "  filter (print all)  ${t_all} s wall, ${c_all} s CPU"
echo "  store import        ${t_import} s wall, ${c_import} s CPU: $(ratio "$t_import" "$t_all")x filter's time (wall), $(ratio "$c_import" "$c_all")x (CPU)"
if [ -n "${SIFT_BEFORE:-}" ]; then
    read -r t_b c_b <<< "$(best "$DIR/import.sh" "$DIR/empty.sqlite" "$DIR/round.sqlite" "$SIFT_BEFORE" "$ndjson")"
    echo "    before: ${t_b} s wall, ${c_b} s CPU: $(ratio "$t_b" "$t_import")x faster now (wall), $(ratio "$c_b" "$c_import")x (CPU)"
fi
for p in TRUEPREDICATE "$PREDICATE"; do
    "$SIFT" filter "$p" "$ndjson" > "$DIR/filter.out"
    "$SIFT" store query "$DIR/store.sqlite" Record "$p" > "$DIR/query.out"
    same=$(cmp -s "$DIR/filter.out" "$DIR/query.out" && echo "same bytes as filter" || echo "OUTPUT DIFFERS from filter")
    [ "$same" = "same bytes as filter" ] || fail=1
    read -r t_f c_f t_q c_q t_b c_b <<< "$(best_in_turn "$ndjson" "$DIR/store.sqlite" "$p")"
    echo "  query '$p' ($(wc -l < "$DIR/query.out") rows, $same):"
    echo "    filter ${t_f} s wall, ${c_f} s CPU; store query ${t_q} s wall, ${c_q} s CPU: $(ratio "$t_q" "$t_f")x filter's time (wall), $(ratio "$c_q" "$c_f")x (CPU)"
    if [ -n "${SIFT_BEFORE:-}" ]; then
        "$SIFT_BEFORE" store query "$DIR/store.sqlite" Record "$p" | cmp -s - "$DIR/query.out" || { echo "    OUTPUT DIFFERS from before"; fail=1; }
        echo "    before: ${t_b} s wall, ${c_b} s CPU: $(ratio "$t_b" "$t_q")x faster now (wall), $(ratio "$c_b" "$c_q")x (CPU)"
    fi
done
cp "$DIR/empty.sqlite" "$DIR/empty.sqlite.keep"
rm -f "$DIR"/*.sqlite "$DIR"/*.sqlite-*

# The big file: the NDJSON records repeated up to BIG_MB megabytes.
big="$DIR/big.ndjson"
copies=$(awk -v size="$(stat -c %s "$DIR/records.ndjson")" -v mb="$BIG_MB" 'BEGIN { print int(mb * 1048576 / size) + 1 }')
for _ in $(seq "$copies"); do cat "$DIR/records.ndjson"; done > "$big"
per_copy=$(wc -l < "$DIR/jq.out")
expected=$(( per_copy * copies ))
echo "big NDJSON: $(mb "$big") MB, $(( RECORDS * copies )) records"
for mode in count print pipe; do
    case $mode in
        count) args=(--count "$PREDICATE" "$big") ;;
        print) args=("$PREDICATE" "$big") ;;
        pipe) args=() ;;
    esac
    if [ "$mode" = pipe ]; then
        /usr/bin/time -f "%e %M" -o "$DIR/time" bash -c 'cat "$1" | "$0" filter --count "$2" > "$3"' "$SIFT" "$big" "$PREDICATE" "$DIR/big.out"
        got=$(cat "$DIR/big.out")
    elif [ "$mode" = count ]; then
        /usr/bin/time -f "%e %M" -o "$DIR/time" "$SIFT" filter "${args[@]}" > "$DIR/big.out"
        got=$(cat "$DIR/big.out")
    else
        /usr/bin/time -f "%e %M" -o "$DIR/time" "$SIFT" filter "${args[@]}" > "$DIR/big.out"
        got=$(wc -l < "$DIR/big.out")
    fi
    read -r secs kb < "$DIR/time"
    [ "$got" = "$expected" ] || { echo "MISMATCH on big $mode: expected $expected, got $got"; fail=1; }
    rate=$(awk -v b="$(stat -c %s "$big")" -v s="$secs" 'BEGIN { printf "%.0f", b / 1e6 / s }')
    echo "  $mode: ${secs} s (${rate} MB/s whole process), peak RSS $(( kb / 1024 )) MB, $got matches"
done
# The import's peak resident size on the big file (streamed: one batch of objects at a time).
cp "$DIR/empty.sqlite.keep" "$DIR/big.sqlite"
/usr/bin/time -f "%e %M" -o "$DIR/time" "$SIFT" store import "$DIR/big.sqlite" Record "$big" > "$DIR/big.out"
read -r secs kb < "$DIR/time"
got=$(cat "$DIR/big.out")
[ "$got" = "$(( RECORDS * copies ))" ] || { echo "MISMATCH on big store import: $got records"; fail=1; }
echo "  store import: ${secs} s, peak RSS $(( kb / 1024 )) MB, $got records"
rm -f "$big" "$DIR/big.out" "$DIR"/*.sqlite*
exit $fail
