// The GNUstep baseline for `sift filter`: GNUstep's NSPredicate evaluated per record. Reads an
// NDJSON file into NSDictionary objects with NSJSONSerialization (untimed), then for each
// predicate on standard input (one a line) parses it once and times -evaluateWithObject: over
// every record, ROUNDS times, keeping the fastest pass. Only evaluation is timed, so the records/s
// it prints are an upper bound for GNUstep filtering that file. scripts/gnustep-filter-bench.sh
// compiles it and compares it with whole `sift filter --count` processes on the same records.
// Output, one line a predicate: matches <TAB> records/s <TAB> predicate, or "error: <reason>".
#import <Foundation/Foundation.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/// Every line of the file at `path` read as one JSON value.
static NSMutableArray *readRecords(const char *path) {
    FILE *file = fopen(path, "r");
    if (file == NULL) { perror(path); exit(1); }
    NSMutableArray *records = [NSMutableArray array];
    char *line = NULL;
    size_t capacity = 0;
    ssize_t length;
    while ((length = getline(&line, &capacity, file)) != -1) {
        NSAutoreleasePool *pool = [NSAutoreleasePool new];
        NSData *data = [NSData dataWithBytes:line length:(NSUInteger)length];
        NSError *error = nil;
        id record = [NSJSONSerialization JSONObjectWithData:data options:0 error:&error];
        if (record == nil) { fprintf(stderr, "bad record: %s\n", line); exit(1); }
        [records addObject:record];
        [pool drain];
    }
    free(line);
    fclose(file);
    return records;
}

/// The matches of `predicate` over `records`, and the fastest of `rounds` passes in seconds.
static NSUInteger timePasses(NSPredicate *predicate, NSArray *records, int rounds, double *best) {
    NSUInteger matches = 0, count = [records count];
    *best = 1e30;
    for (int r = 0; r < rounds; r++) {
        NSUInteger m = 0;
        double start = seconds();
        NSAutoreleasePool *pool = [NSAutoreleasePool new];
        for (NSUInteger i = 0; i < count; i++) {
            if ([predicate evaluateWithObject:[records objectAtIndex:i]]) m++;
            // Drained every thousand records, as a long-running filter would.
            if (i % 1000 == 999) { [pool drain]; pool = [NSAutoreleasePool new]; }
        }
        [pool drain];
        double spent = seconds() - start;
        if (spent < *best) *best = spent;
        matches = m;
    }
    return matches;
}

int main(int argc, const char *argv[]) {
    if (argc < 2) { fprintf(stderr, "usage: filter_eval RECORDS.ndjson [ROUNDS] < predicates\n"); return 2; }
    int rounds = argc > 2 ? atoi(argv[2]) : 3;
    NSAutoreleasePool *pool = [NSAutoreleasePool new];
    NSArray *records = readRecords(argv[1]);
    char *line = NULL;
    size_t capacity = 0;
    ssize_t length;
    while ((length = getline(&line, &capacity, stdin)) != -1) {
        if (length > 0 && line[length - 1] == '\n') line[--length] = '\0';
        if (length == 0) continue;
        NSString *format = [[NSString alloc] initWithBytes:line length:(NSUInteger)length encoding:NSUTF8StringEncoding];
        NS_DURING
            NSPredicate *predicate = [NSPredicate predicateWithFormat:format argumentArray:nil];
            double best;
            NSUInteger matches = timePasses(predicate, records, rounds, &best);
            printf("%lu\t%.0f\t%s\n", (unsigned long)matches, (double)[records count] / best, line);
        NS_HANDLER
            printf("error: %s\t%s\n", [[localException reason] UTF8String], line);
        NS_ENDHANDLER
        fflush(stdout);
        [format release];
    }
    free(line);
    [pool drain];
    return 0;
}
