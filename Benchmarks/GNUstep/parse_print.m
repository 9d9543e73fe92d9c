// The GNUstep baseline for `sift parse`: reads predicates from standard input, one a line, parses
// each with +[NSPredicate predicateWithFormat:] and prints -predicateFormat, or "error: <reason>"
// when GNUstep raises. scripts/gnustep-bench.sh compiles it and times it against `sift parse` on
// the same file. With --check it prints only "ok" or "error" per line, to pick the lines GNUstep
// accepts.
#import <Foundation/Foundation.h>
#include <stdio.h>
#include <string.h>

int main(int argc, const char *argv[]) {
    BOOL check = argc > 1 && strcmp(argv[1], "--check") == 0;
    char *line = NULL;
    size_t capacity = 0;
    ssize_t length;
    unsigned long count = 0;
    NSAutoreleasePool *pool = [NSAutoreleasePool new];
    while ((length = getline(&line, &capacity, stdin)) != -1) {
        if (length > 0 && line[length - 1] == '\n') line[--length] = '\0';
        NSString *format = [[NSString alloc] initWithBytes:line length:(NSUInteger)length encoding:NSUTF8StringEncoding];
        NS_DURING
            NSPredicate *predicate = [NSPredicate predicateWithFormat:format argumentArray:nil];
            if (check) {
                fputs("ok\n", stdout);
            } else {
                fputs([[predicate predicateFormat] UTF8String], stdout);
                fputc('\n', stdout);
            }
        NS_HANDLER
            if (check) fputs("error\n", stdout);
            else printf("error: %s\n", [[localException reason] UTF8String]);
        NS_ENDHANDLER
        [format release];
        // The pool is drained every thousand lines, as a long-running reader would.
        if (++count % 1000 == 0) {
            [pool drain];
            pool = [NSAutoreleasePool new];
        }
    }
    [pool drain];
    free(line);
    return 0;
}
