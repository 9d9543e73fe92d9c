# The records of the filter benchmarks (scripts/gnustep-filter-bench.sh, scripts/filter-instructions.sh):
# n NDJSON records with ASCII and accented names, arrays of string tags and a nested object,
# the same for the same n (seeded). Usage: awk -v n=RECORDS -f scripts/filter-records.awk
BEGIN {
    srand(26)
    split("Anna Berg,Bob Lund,Chantal Roux,José Álvarez,Zoë Ek,Ivan Petrov,Dana Smith,Jörg Straße,Ana Núñez,Mats Hansen,Brian Kane,Łukasz Wójcik", names, ",")
    split("Oslo,Malmö,Lima,Zürich,Quito,Kraków,Perth,Omaha", cities, ",")
    split("a,b,red,green,blue,teal,Bravo,rust", tags, ",")
    for (i = 0; i < n; i++) {
        nt = int(rand() * 4); t = ""
        for (k = 0; k < nt; k++) t = t (k ? "," : "") "\"" tags[1 + int(rand() * 8)] "\""
        printf "{\"id\":%d,\"name\":\"%s\",\"age\":%d,\"active\":%s,\"address\":{\"city\":\"%s\",\"zip\":\"%05d\"},\"tags\":[%s]}\n", i, names[1 + int(rand() * 12)], int(rand() * 90), (rand() < 0.5 ? "true" : "false"), cities[1 + int(rand() * 8)], int(rand() * 99999), t
    }
}
